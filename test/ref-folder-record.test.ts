// `events` and `stats` check the event index's head against the stamp of the refs, and `status`
// lists the task refs for its view file's key; with loose ref files both read each one, so what
// they take of them is recorded with the stats of the ref folders and packed-refs
// (ref-folder-record.ts), and taken from the record while those stand. Every move after the record
// must still be seen: git writes a ref by renaming a new file over it or removes it, both of which
// give its folder a new change time, and packed-refs moves by rename too.
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { eachMoveSeen, readAfresh, settle } from "./support/record-moves.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { by, events, MIN, walked } from "./support/event-walk.ts";
import { fixtureNow, viewsRepo } from "./support/views-fixture.ts";
import { storeClaim, storeDone, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

const recordPath = (repo: string) => join(repo, ".git/handoff/events/ref-folders");

async function fixture(): Promise<string> {
  const repo = tempRepo();
  for (const id of ["a", "b", "c", "d"]) await storeTasks(by(repo, "lead", 0), [{ id, objective: id }]);
  await storeClaim(by(repo, "alice", MIN), "a");
  // c and d packed only; a and b loose (written again at their values), as writes since a pack leave them.
  gitOut(repo, "pack-refs", "--all");
  mkdirSync(join(repo, ".git/refs/handoff/tasks"), { recursive: true });
  for (const id of ["a", "b"]) writeFileSync(join(repo, ".git/refs/handoff/tasks", id), `${gitOut(repo, "rev-parse", `refs/handoff/tasks/${id}`)}\n`);
  return repo;
}

const check = async (repo: string, what: string) => {
  for (const args of [[], ["--limit", "2"], ["--agent", "alice"], ["--agent", "bob", "--limit", "1"]]) {
    const all = await walked(repo, args[0] === "--agent" ? { agent: args[1] } : {});
    const limit = args.includes("--limit") ? Number(args[args.indexOf("--limit") + 1]) : undefined;
    assert.equal(events(repo, ...args), limit ? all.slice(-limit) : all, `${what}: events ${args.join(" ")}`);
  }
};

test("the stamp is taken from the record while the ref folders stand: a ref file written over in place is not read", async () => {
  const repo = await fixture();
  settle();
  const before = await walked(repo);
  assert.equal(events(repo), before, "the index built");
  assert.equal(events(repo), before);
  assert.ok(existsSync(recordPath(repo)), "the stamp recorded with the folders' stats");
  // Not as git writes a ref (no new file, no folder changed): the record stands, and the ref file is not read.
  writeFileSync(join(repo, ".git/refs/handoff/tasks/a"), `${gitOut(repo, "rev-parse", "refs/handoff/tasks/a~1")}\n`);
  assert.equal(events(repo), before, "answered from the head, by the recorded stamp");
  // Moved by git: seen.
  gitOut(repo, "update-ref", "refs/handoff/tasks/a", "refs/handoff/tasks/a");
  assert.equal(events(repo), await walked(repo));
  assert.is.not(events(repo).length, before.length);
});

test("every move after the record is seen: a loose ref, a packed one moved or deleted, a new folder, the refs packed", async () => {
  const repo = await fixture();
  settle();
  await check(repo, "built");
  const moves: [string, () => unknown][] = [
    ["a loose ref moved", () => storeDone(by(repo, "alice", 2 * MIN), "a", { commit: "HEAD" })],
    ["a packed ref moved", () => storeClaim(by(repo, "bob", 3 * MIN), "c")],
    ["a packed ref rewound", () => gitOut(repo, "update-ref", "refs/handoff/tasks/d", "refs/handoff/tasks/c")],
    ["a ref in a folder of its own", () => gitOut(repo, "update-ref", "refs/handoff/tasks/x/y", "refs/handoff/tasks/c")],
    ["the refs packed", () => gitOut(repo, "pack-refs", "--all")],
    ["a packed ref deleted (packed-refs alone rewritten)", () => gitOut(repo, "update-ref", "-d", "refs/handoff/tasks/d")],
    ["a loose ref deleted", () => storeClaim(by(repo, "carol", 4 * MIN), "b").then(() => gitOut(repo, "update-ref", "-d", "refs/handoff/tasks/b"))],
    ["every folder removed", () => gitOut(repo, "pack-refs", "--all")],
  ];
  for (const [what, move] of moves) {
    const record = readFileSync(recordPath(repo), "utf8");
    await move();
    await check(repo, what);
    settle();
    events(repo);
    assert.is.not(readFileSync(recordPath(repo), "utf8"), record, `${what}: recorded again`);
  }
});

/**
 * `path` (a ref folder or packed-refs) with its times set an hour ahead: not recorded, as a move in
 * the file system's tick could leave its stats as they are; set a minute back: recorded.
 */
async function recordedOnlyWhenBehind(repo: string, path: string, what: string): Promise<void> {
  const future = new Date(Date.now() + 60 * 60_000);
  utimesSync(path, future, future);
  await check(repo, `${what}'s time ahead`);
  assert.not.ok(existsSync(recordPath(repo)), `${what} changed in the file system's tick or later: not recorded`);
  const past = new Date(Date.now() - 60_000);
  utimesSync(path, past, past);
  settle();
  await check(repo, `${what}'s time behind`);
  assert.ok(existsSync(recordPath(repo)), `${what} changed before the file system's tick: recorded`);
}

test("a folder or packed-refs changed at or after the file system's time when the stamp is taken is not recorded", async () => {
  const repo = await fixture();
  settle();
  await recordedOnlyWhenBehind(repo, join(repo, ".git/refs/handoff/tasks"), "a folder");
  const record = readFileSync(recordPath(repo), "utf8");
  assert.match(record, /^ref-folders 1\n/);
  // The same stats in a record of another layout (a later build's): read as none, and written over.
  writeFileSync(recordPath(repo), record.replace(/^ref-folders 1/, "ref-folders 2"));
  await check(repo, "a record of another layout");
  assert.is(readFileSync(recordPath(repo), "utf8"), record);
  // packed-refs too: a ref only in it moves by a new file renamed over it.
  rmSync(recordPath(repo));
  await recordedOnlyWhenBehind(repo, join(repo, ".git/packed-refs"), "packed-refs");
});

const taskRecordPath = (repo: string) => join(repo, ".git/handoff/task-ref-folders");

/** Past LISTING_AT tasks, where status reads its view file by the task refs' key; refs packed, then a few loose again. */
function viewsFixture(): { repo: string; env: NodeJS.ProcessEnv } {
  const f = { tasks: 520, agents: 4, events: 1040 };
  const repo = viewsRepo(f);
  gitOut(repo, "pack-refs", "--all");
  mkdirSync(join(repo, ".git/refs/handoff/tasks"), { recursive: true });
  for (const id of ["t-00001", "t-00002", "t-00003"]) writeFileSync(join(repo, ".git/refs/handoff/tasks", id), `${gitOut(repo, "rev-parse", `refs/handoff/tasks/${id}`)}\n`);
  return { repo, env: { HANDOFF_NOW: fixtureNow(f) } };
}

test("status takes the loose task refs from the record while their folders stand, and sees every move after it", () => {
  const { repo, env } = viewsFixture();
  const status = () => {
    const r = cli(["status", "--no-conflicts"], { cwd: repo, agent: "agent-000", env });
    assert.is(r.code, 0, r.stderr);
    return r.stdout + r.stderr;
  };
  const fresh = () => readAfresh(taskRecordPath(repo), status);
  status(); // the view file written
  settle();
  const before = status();
  assert.ok(existsSync(taskRecordPath(repo)), "the loose task refs recorded with their folders' stats");
  // Not as git writes a ref: the record stands, and the ref file is not read.
  const loose = join(repo, ".git/refs/handoff/tasks/t-00001");
  const tip = readFileSync(loose, "utf8");
  writeFileSync(loose, `${gitOut(repo, "rev-parse", "refs/handoff/tasks/t-00001~1")}\n`);
  assert.is(status(), before, "the loose refs as recorded");
  assert.is.not(fresh(), before, "the ref's earlier state, read afresh");
  writeFileSync(loose, tip);
  gitOut(repo, "update-ref", "refs/handoff/tasks/t-00001", tip.trim());
  const moves: [string, () => unknown][] = [
    ["a loose task ref rewound", () => gitOut(repo, "update-ref", "refs/handoff/tasks/t-00002", "refs/handoff/tasks/t-00002~1")],
    ["a packed task ref rewound", () => gitOut(repo, "update-ref", "refs/handoff/tasks/t-00010", "refs/handoff/tasks/t-00010~1")],
    ["a task ref in a folder of its own", () => gitOut(repo, "update-ref", "refs/handoff/tasks/x/y", "refs/handoff/tasks/t-00020")],
    ["a loose task ref deleted", () => gitOut(repo, "update-ref", "-d", "refs/handoff/tasks/t-00003")],
    ["the refs packed", () => gitOut(repo, "pack-refs", "--all")],
    ["a packed task ref deleted (packed-refs alone rewritten)", () => gitOut(repo, "update-ref", "-d", "refs/handoff/tasks/t-00030")],
  ];
  eachMoveSeen(taskRecordPath(repo), moves, status, (what) => !what.startsWith("the refs packed"));
});

test.run();
