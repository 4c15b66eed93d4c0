// One-shot listings of the task refs (`task list`, `ready`, `claim --next`, a claim's capacity
// check) take the loose task refs from the record kept with their folders' stats
// (task-ref-record.ts, ref-folder-record.ts) while those stand. Every move after the record must
// still be seen (a ref renamed over, deleted, the refs packed, packed-refs renamed over, a new
// folder): each is checked against a fresh read (the record removed). A ref file written over in
// place (not as git writes) is not read while the record stands: that shows the record is read.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { eachMoveSeen, readAfresh, settle } from "./support/record-moves.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { fromTemplate } from "./support/repo-template.ts";

test.after(cleanupTemp);

const recordPath = (repo: string) => join(repo, ".git/handoff/task-ref-folders");

const tip = (repo: string, id: string) => gitOut(repo, "rev-parse", `refs/handoff/tasks/${id}`);

function run(repo: string, args: string[], agent = "lead"): { code: number; out: string } {
  const r = cli(args, { cwd: repo, agent });
  return { code: r.code, out: r.stdout + r.stderr };
}

/** A command's JSON answer (stdout alone: a listing's problems go to stderr). */
function json<T>(repo: string, args: string[], agent: string): T {
  const r = cli([...args, "--json"], { cwd: repo, agent });
  assert.is(r.code, 0, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

function ok(repo: string, args: string[], agent = "lead"): string {
  const r = run(repo, args, agent);
  assert.is(r.code, 0, `${args.join(" ")}: ${r.out}`);
  return r.out;
}

/** A ref moved as git moves it: a new file renamed over packed-refs, `id`'s line at `oid`. */
function repack(repo: string, id: string, oid: string): void {
  const path = join(repo, ".git/packed-refs");
  const text = readFileSync(path, "utf8").replace(new RegExp(`^[0-9a-f]{40} refs/handoff/tasks/${id}$`, "m"), `${oid} refs/handoff/tasks/${id}`);
  assert.ok(text.includes(`${oid} refs/handoff/tasks/${id}\n`), `${id} is packed`);
  writeFileSync(`${path}.new`, text);
  renameSync(`${path}.new`, path);
}

const IDS = ["a", "b", "c", "d", "e", "f"];

/** Tasks a-f (b first by priority); a and b loose, the others packed only. `claimed`: each task's commit claimed by alice. */
function fixture(policy = ""): { repo: string; todo: Record<string, string>; claimed: Record<string, string> } {
  const repo = copy();
  // Read by the command that runs next: the tasks and claims were written without it.
  if (policy) writeFileSync(join(repo, ".handoff.yaml"), policy);
  const todo: Record<string, string> = {};
  const claimed: Record<string, string> = {};
  for (const line of gitOut(repo, "for-each-ref", "--format=%(objectname) %(refname)", "refs/handoff/tasks/", "refs/claimed/").split("\n")) {
    const [oid, ref] = line.split(" ") as [string, string];
    (ref.startsWith("refs/claimed/") ? claimed : todo)[ref.slice(ref.lastIndexOf("/") + 1)] = oid;
  }
  return { repo, todo, claimed };
}

/** fixture()'s repository, written by the real commands once per process; each claimed commit kept under refs/claimed/. */
const copy = fromTemplate(() => {
  const repo = tempRepo();
  for (const id of IDS) ok(repo, ["task", "add", `task ${id}`, "--id", id, "--priority", id === "b" ? "5" : id === "c" ? "3" : "0"]);
  const todo: Record<string, string> = {};
  const claimed: Record<string, string> = {};
  for (const id of IDS) {
    todo[id] = tip(repo, id);
    ok(repo, ["claim", id, "--over-capacity"], "alice");
    claimed[id] = tip(repo, id);
    gitOut(repo, "update-ref", `refs/claimed/${id}`, claimed[id]!);
    gitOut(repo, "update-ref", `refs/handoff/tasks/${id}`, todo[id]!);
  }
  gitOut(repo, "pack-refs", "--all");
  // a and b loose again (as writes since a pack leave them), at their values.
  for (const id of ["a", "b"]) gitOut(repo, "update-ref", `refs/handoff/tasks/${id}`, claimed[id]!), gitOut(repo, "update-ref", `refs/handoff/tasks/${id}`, todo[id]!);
  rmSync(recordPath(repo), { force: true });
  return repo;
});

/** The moves after a record, each a way git (or a pack) changes the task refs. */
function moves(repo: string, todo: Record<string, string>, claimed: Record<string, string>): [string, () => void][] {
  return [
    ["a loose ref moved", () => gitOut(repo, "update-ref", "refs/handoff/tasks/b", claimed.b!)],
    ["a ref only in packed-refs moved (packed-refs renamed over)", () => repack(repo, "c", claimed.c!)],
    ["a ref in a folder of its own", () => gitOut(repo, "update-ref", "refs/handoff/tasks/x/y", todo.d!)],
    ["the refs packed", () => gitOut(repo, "pack-refs", "--all")],
    ["a packed ref deleted (packed-refs alone rewritten)", () => gitOut(repo, "update-ref", "-d", "refs/handoff/tasks/c")],
    ["a loose ref made", () => gitOut(repo, "update-ref", "refs/handoff/tasks/c", todo.c!)],
    ["a loose ref deleted", () => gitOut(repo, "update-ref", "-d", "refs/handoff/tasks/x/y")],
    ["every folder removed", () => gitOut(repo, "pack-refs", "--all")],
  ];
}

for (const args of [["task", "list", "--json"], ["task", "list", "--status", "todo", "--limit", "2"], ["ready", "--json"], ["ready", "--limit", "1"]]) {
  test(`${args.join(" ")}: the loose task refs from the record while their folders stand, and every move after it seen`, () => {
    const { repo, todo, claimed } = fixture();
    const read = () => ok(repo, args, "bob");
    const fresh = () => readAfresh(recordPath(repo), read);
    settle();
    const before = read();
    assert.ok(existsSync(recordPath(repo)), "recorded");
    // Not as git writes a ref: the record stands, and the ref file is not read.
    const loose = join(repo, ".git/refs/handoff/tasks/b");
    writeFileSync(loose, `${claimed.b}\n`);
    assert.is(read(), before, "the loose refs as recorded");
    assert.is.not(fresh(), before, "the ref written over, read afresh");
    writeFileSync(loose, `${todo.b}\n`);
    gitOut(repo, "update-ref", "refs/handoff/tasks/b", todo.b!);
    eachMoveSeen(recordPath(repo), moves(repo, todo, claimed), read, (what) => what === "a loose ref moved" || what.startsWith("a ref only in packed-refs"));
  });
}

test("claim --next takes the best ready task as the refs stand after every move", () => {
  const { repo, todo, claimed } = fixture();
  // The task claim --next takes, given back after (a move too): the first ready one, read afresh.
  const next = () => {
    const id = json<{ id: string }>(repo, ["claim", "--next"], "bob").id;
    gitOut(repo, "update-ref", `refs/handoff/tasks/${id}`, todo[id]!);
    return id;
  };
  const freshFirst = () => {
    rmSync(recordPath(repo), { force: true });
    return json<{ id: string }[]>(repo, ["ready", "--limit", "1"], "bob")[0]?.id;
  };
  settle();
  assert.is(next(), "b");
  settle();
  ok(repo, ["ready"], "bob");
  assert.ok(existsSync(recordPath(repo)));
  // Not as git writes a ref: b claimed by alice, in place; the record stands, so b is still a
  // candidate, and the compare-and-swap (which reads the ref itself) decides: not granted to bob.
  writeFileSync(join(repo, ".git/refs/handoff/tasks/b"), `${claimed.b}\n`);
  const other = json<{ id: string }>(repo, ["claim", "--next"], "bob").id;
  assert.is.not(other, "b", "b is alice's");
  gitOut(repo, "update-ref", `refs/handoff/tasks/${other}`, todo[other]!);
  writeFileSync(join(repo, ".git/refs/handoff/tasks/b"), `${todo.b}\n`);
  gitOut(repo, "update-ref", "refs/handoff/tasks/b", todo.b!);
  settle();
  ok(repo, ["ready"], "bob");
  for (const [what, move] of moves(repo, todo, claimed)) {
    assert.ok(existsSync(recordPath(repo)), `${what}: recorded before`);
    move();
    const taken = next();
    // Once settled, the read afresh records the refs as they stand (taken given back): the next move's record before it.
    settle();
    assert.is(taken, freshFirst(), `${what}: the best ready task as read afresh`);
  }
});

test("a claim's capacity check counts the claims as the refs stand after every move", () => {
  const { repo, todo, claimed } = fixture("max_concurrent: 1\n");
  // alice's claim of f, given back when granted (a move too): refused while alice holds a task.
  const probe = () => {
    const r = run(repo, ["claim", "f"], "alice");
    if (r.code === 0) gitOut(repo, "update-ref", "refs/handoff/tasks/f", todo.f!);
    else assert.match(r.out, /capacity/, r.out);
    return r.code === 0 ? "granted" : "refused";
  };
  const holds = (id: string) => gitOut(repo, "update-ref", `refs/handoff/tasks/${id}`, claimed[id]!);
  holds("a");
  settle();
  assert.is(probe(), "refused");
  assert.not.ok(existsSync(recordPath(repo)), "a claim reads the record but writes none: its own move would put it out of date");
  ok(repo, ["ready"], "bob");
  assert.ok(existsSync(recordPath(repo)), "recorded");
  // Not as git writes a ref: alice's claim of a given back in place; the record stands, so it still counts.
  const loose = join(repo, ".git/refs/handoff/tasks/a");
  writeFileSync(loose, `${todo.a}\n`);
  assert.is(probe(), "refused", "the loose refs as recorded");
  writeFileSync(loose, `${claimed.a}\n`);
  const steps: [string, () => void, "granted" | "refused"][] = [
    ["a loose ref moved (the claim given back)", () => gitOut(repo, "update-ref", "refs/handoff/tasks/a", todo.a!), "granted"],
    ["a ref only in packed-refs moved (packed-refs renamed over)", () => repack(repo, "c", claimed.c!), "refused"],
    ["a packed ref deleted (packed-refs alone rewritten)", () => gitOut(repo, "update-ref", "-d", "refs/handoff/tasks/c"), "granted"],
    ["a loose ref made", () => gitOut(repo, "update-ref", "refs/handoff/tasks/c", claimed.c!), "refused"],
    ["the refs packed", () => gitOut(repo, "pack-refs", "--all"), "refused"],
    ["a ref in a folder of its own", () => gitOut(repo, "update-ref", "refs/handoff/tasks/x/y", todo.d!), "refused"],
    ["a packed ref moved by a loose file", () => gitOut(repo, "update-ref", "refs/handoff/tasks/c", todo.c!), "granted"],
    ["a loose ref deleted", () => gitOut(repo, "update-ref", "-d", "refs/handoff/tasks/c"), "granted"],
    ["every folder removed", () => gitOut(repo, "pack-refs", "--all"), "granted"],
    ["a loose ref made again", () => holds("e"), "refused"],
  ];
  for (const [what, move, expected] of steps) {
    settle();
    ok(repo, ["ready"], "bob");
    assert.ok(existsSync(recordPath(repo)), `${what}: recorded before`);
    move();
    assert.is(probe(), expected, what);
    rmSync(recordPath(repo));
    assert.is(probe(), expected, `${what}: as read afresh`);
  }
});

test.run();
