// One-shot claims find the claimed tasks through .git/handoff/claimed.index (claimed-index.ts):
// one line per task ref, `<ref> <commit> <status>`, so a claim's capacity check and overlap
// advisory read the records of claimed tasks and of tasks whose tip moved, not of every task. The
// index must never change an answer: tips moved by commands that do not read it, a damaged or
// foreign file, and tasks that are gone all give what a full listing gives.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

const indexOf = (repo: string) => `${repo}/.git/handoff/claimed.index`;
function lines(repo: string): string[] {
  return readFileSync(indexOf(repo), "utf8").split("\n").filter(Boolean);
}
const tip = (repo: string, id: string) => gitOut(repo, "rev-parse", `refs/handoff/tasks/${id}`).trim();

async function project(ids: string[], scopes: Record<string, string> = {}): Promise<string> {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, ids.map((id) => ({ id, objective: `task ${id}`, ...(scopes[id] ? { scope: [scopes[id]!] } : {}) })));
  return repo;
}

test("capacity through the index: a task released by a command that does not read it is free again; one still held counts", async () => {
  const repo = await project(["a", "b", "c"]);
  const claim = (id: string) => cli(["claim", id, "--json"], { cwd: repo, agent: "alice" });
  assert.is(claim("a").code, 0);
  assert.ok(existsSync(indexOf(repo)), "the first claim's capacity check wrote the index");
  assert.is(lines(repo).length, 5, "a header and a line per task, written before the claim moved a, and the claim's own line");
  const full = claim("b");
  assert.is(full.code, 3, full.stdout + full.stderr);
  assert.is(full.json.error.code, "at_capacity");
  assert.match(full.json.error.message, /\(a\)/);
  assert.ok(lines(repo).some((l) => l.startsWith(`refs/handoff/tasks/a ${tip(repo, "a")} claimed\t[`)), lines(repo).join("\n"));
  // release does not list claimed tasks: the index still says a is claimed, at a commit no longer its tip.
  assert.is(cli(["release", "a"], { cwd: repo, agent: "alice" }).code, 0);
  assert.ok(lines(repo).some((l) => l.startsWith("refs/handoff/tasks/a ") && l.split("\t")[0]!.endsWith(" claimed")));
  assert.is(claim("b").code, 0, "a's tip moved: read again, it is free, so b may be claimed");
  assert.ok(lines(repo).includes(`refs/handoff/tasks/a ${tip(repo, "a")} todo`), "the moved tip's line appended");
  const again = claim("c");
  assert.is(again.code, 3);
  assert.match(again.json.error.message, /\(b\)/);
  assert.ok(lines(repo).some((l) => l.startsWith(`refs/handoff/tasks/b ${tip(repo, "b")} claimed\t[`)), "what a claim reads of b kept on its line");
});

test("a one-shot write adds the line of the record it landed, so the next claim finds every tip named", async () => {
  const repo = await project(["a", "b"]);
  assert.is(cli(["claim", "a"], { cwd: repo, agent: "alice" }).code, 0);
  assert.match(lines(repo).at(-1)!, new RegExp(`^refs/handoff/tasks/a ${tip(repo, "a")} claimed\t\\["a","alice",`));
  assert.is(cli(["release", "a"], { cwd: repo, agent: "alice" }).code, 0);
  assert.is(lines(repo).at(-1), `refs/handoff/tasks/a ${tip(repo, "a")} todo`);
  // A write that changes nothing lands nothing and adds no line.
  const before = lines(repo).length;
  assert.is.not(cli(["release", "a"], { cwd: repo, agent: "alice" }).code, 0);
  assert.is(lines(repo).length, before);
  // Every task ref's tip has its line: the next claim's capacity check reads no record from git.
  for (const id of ["a", "b"]) assert.ok(lines(repo).some((l) => l.startsWith(`refs/handoff/tasks/${id} ${tip(repo, id)} `)), id);
  assert.is(cli(["claim", "b"], { cwd: repo, agent: "alice" }).code, 0);
});

test("overlaps through the index: another agent's claim made since is reported", async () => {
  const repo = await project(["api", "client"], { api: "src/api/**", client: "src/api/client.ts" });
  assert.is(cli(["claim", "api"], { cwd: repo, agent: "bob" }).code, 0);
  const r = cli(["claim", "client", "--json"], { cwd: repo, agent: "carol" });
  assert.is(r.code, 0, r.stderr);
  assert.match(JSON.stringify(r.json), /api/, "the overlap with bob's claim is named");
  assert.match(r.stderr + r.stdout, /bob/);
});

test("a damaged, foreign or stale index is passed over and written anew; answers stay those of a full listing", async () => {
  const repo = await project(["a", "b", "c"]);
  assert.is(cli(["claim", "a"], { cwd: repo, agent: "alice" }).code, 0);
  // Torn and hostile lines, a line for a task that does not exist, a wrong status at a wrong commit.
  writeFileSync(
    indexOf(repo),
    `handoff-claimed-index 3\nrefs/handoff/tasks/a 0000000000000000000000000000000000000000 todo\nrefs/handoff/tasks/gone ${"1".repeat(40)} claimed\nrefs/handoff/tasks/b ${tip(repo, "b")} claim\n../../etc/passwd ${"2".repeat(40)} claimed\nrefs/handoff/tasks/c ${"3".repeat(20)}`,
  );
  const full = cli(["claim", "b", "--json"], { cwd: repo, agent: "alice" });
  assert.is(full.code, 3, "a is still counted: its line named another commit");
  assert.is(full.json.error.code, "at_capacity");
  // A foreign file (another format) is replaced whole.
  writeFileSync(indexOf(repo), "something else\nrefs/handoff/tasks/a x y\n");
  assert.is(cli(["claim", "b", "--json"], { cwd: repo, agent: "alice" }).code, 3);
  const now = lines(repo);
  assert.is(now[0], "handoff-claimed-index 3");
  assert.equal(now.slice(1).map((l) => l.split("\t")[0]).sort(), ["a", "b", "c"].map((id) => `refs/handoff/tasks/${id} ${tip(repo, id)} ${id === "a" ? "claimed" : "todo"}`).sort());
  assert.is(cli(["claim", "b", "--over-capacity"], { cwd: repo, agent: "alice" }).code, 0);
});

test("an index grown past twice the task refs (plus 64) is written anew with a line per ref", async () => {
  const repo = await project(["a", "b", "c"]);
  assert.is(cli(["claim", "a"], { cwd: repo, agent: "alice" }).code, 0);
  const head = readFileSync(indexOf(repo), "utf8");
  // Lines a long history of appends leaves: many for the same ref, all sound.
  writeFileSync(indexOf(repo), head + `refs/handoff/tasks/b ${tip(repo, "b")} todo\n`.repeat(100));
  assert.is(cli(["claim", "b"], { cwd: repo, agent: "bob" }).code, 0);
  // A header and a line per ref, then the line b's claim added once it landed.
  assert.is(lines(repo).length, 5, lines(repo).join("\n"));
  assert.ok(lines(repo).at(-1)!.startsWith(`refs/handoff/tasks/b ${tip(repo, "b")} claimed\t`));
});

test("a claimed line whose record is torn or names another task is read from git instead", async () => {
  const repo = await project(["a", "b"]);
  assert.is(cli(["claim", "a"], { cwd: repo, agent: "alice" }).code, 0);
  assert.is(cli(["claim", "b", "--over-capacity"], { cwd: repo, agent: "bob" }).code, 0);
  // Both claimed lines now hold what a claim reads; swap a's for b's, and tear b's.
  const full = cli(["claim", "b", "--json"], { cwd: repo, agent: "carol" });
  assert.is(full.code, 3, "held by bob");
  const text = readFileSync(indexOf(repo), "utf8").split("\n");
  const recA = text.filter((l) => l.startsWith(`refs/handoff/tasks/a ${tip(repo, "a")} claimed\t`)).pop()!;
  const recB = text.filter((l) => l.startsWith(`refs/handoff/tasks/b ${tip(repo, "b")} claimed\t`)).pop()!;
  assert.ok(recA && recB, text.join("\n"));
  writeFileSync(indexOf(repo), `${text[0]}\n${recA.split("\t")[0]}\t${recB.split("\t")[1]}\n${recB.split("\t")[0]}\t["b","bo\n`);
  // alice holds a (capacity 1): her claim of c... there is none; her claim of b is refused as bob's,
  // and a claim by alice of a new task is refused for capacity, naming a, not b.
  assert.is(cli(["task", "add", "task c", "--id", "c"], { cwd: repo, agent: "lead" }).code, 0);
  const r = cli(["claim", "c", "--json"], { cwd: repo, agent: "alice" });
  assert.is(r.code, 3, r.stdout + r.stderr);
  assert.is(r.json.error.code, "at_capacity");
  assert.match(r.json.error.message, /\(a\)/);
});

test.run();
