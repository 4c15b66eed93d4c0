// One-shot bounded listings over many tasks read the task order file (.git/handoff/task-order.json):
// the records they return, not every one. What a one-shot listing returns from it equals what a
// long-running process lists from every record, through claims, new tasks, finished ones,
// priorities changed, a ref deleted, refs packed, claims run out and a compaction; the file is
// patched when refs move (the other lines kept, never parsed), damaged files are only a slower
// read, and a patch of a file replaced meanwhile writes nothing.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { TaskStatus } from "../src/core/task.ts";
import { LISTING_AT, viewKey } from "../src/store/record-cache-listing.ts";
import { openStore } from "../src/store/store.ts";
import { claimReady, listReady } from "../src/store/dependency-actions.ts";
import { listTasksBounded } from "../src/store/task-listing.ts";
import { OrderFile, orderFile, patchOrderFile, recordsParsed } from "../src/store/task-order-file.ts";
import { TASKS_PREFIX } from "../src/store/task-store.ts";
import { cleanEnv, cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { fixtureNow, viewsRepo, type ViewsFixture } from "./support/views-fixture.ts";
import { storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

// Two commits a task: the one before the tip holds an earlier record of the same task.
const F: ViewsFixture = { tasks: LISTING_AT + 20, agents: 10, events: 2 * (LISTING_AT + 20) };
const NOW = fixtureNow(F);
/** Before every task of the fixture (a clock set back, or a record from a clone whose clock was). */
const EARLY = "2026-10-01T00:00:00.000Z";
/** Past every claim of the fixture (they run 1,000 hours). */
const LATER = new Date(Date.parse(NOW) + 50 * 86_400_000).toISOString();

// Every order: oldest first (all of them), best first, newest first, and oldest first of one status.
const QUERIES: { status?: TaskStatus; limit: number }[] = [{ limit: 1_000 }, { status: "todo", limit: 25 }, { status: "done", limit: 15 }, { status: "claimed", limit: 30 }];

/** Every query, one-shot (the order file) and long-running (every record): the same answers. */
async function sameAsLongRunning(repo: string, agent: string, now: string, what: string): Promise<void> {
  const env = cleanEnv({ HANDOFF_NOW: now });
  const oneShot = await openStore({ cwd: repo, agent, env });
  const warm = await openStore({ cwd: repo, agent, env, warm: true });
  try {
    for (const q of QUERIES) assert.equal(await listTasksBounded(oneShot, q), await listTasksBounded(warm, q), `${what}: ${JSON.stringify(q)}`);
    for (const limit of [1, 100_000]) assert.equal(await listReady(oneShot, { limit }), await listReady(warm, { limit }), `${what}: ready, limit ${limit}`);
  } finally {
    oneShot.close();
    warm.close();
  }
}

const pathIn = (repo: string) => orderFile(join(repo, ".git"));

/** The order file as it stands: its garbage (0 when written afresh) and its task count. */
function fileState(repo: string): { garbage: number; count: number } {
  const f = OrderFile.readTail(pathIn(repo));
  assert.ok(f, "an order file in shape");
  try {
    return { garbage: f!.garbage, count: f!.count };
  } finally {
    f!.close();
  }
}

const run = (repo: string, agent: string, now: string, ...args: string[]) => {
  const r = cli(args, { cwd: repo, agent, env: { HANDOFF_NOW: now } });
  assert.is(r.code, 0, `${args.join(" ")}: ${r.stdout}\n${r.stderr}`);
  return r;
};

function gitIn(repo: string, input: string, ...args: string[]): string {
  const r = spawnSync("git", args, { cwd: repo, input, encoding: "utf8", env: cleanEnv({ GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" }) });
  assert.is(r.status, 0, r.stderr);
  return r.stdout.trim();
}

/** A task's record changed at a new commit on its ref (as another clone could have written it). */
function rewriteRecord(repo: string, id: string, change: (record: Record<string, unknown>) => void): void {
  const ref = TASKS_PREFIX + id;
  const tip = gitOut(repo, "rev-parse", ref);
  const record = JSON.parse(gitOut(repo, "show", `${tip}:task.json`));
  change(record);
  const blob = gitIn(repo, JSON.stringify(record, null, 2) + "\n", "hash-object", "-w", "--stdin");
  const entries = gitOut(repo, "ls-tree", tip)
    .split("\n")
    .map((l) => (l.endsWith("\ttask.json") ? l.replace(/[0-9a-f]{40}(?=\ttask\.json$)/, blob) : l));
  const tree = gitIn(repo, entries.join("\n") + "\n", "mktree");
  const commit = gitIn(repo, gitOut(repo, "log", "-1", "--format=%B", tip), "commit-tree", tree, "-p", tip);
  gitOut(repo, "update-ref", ref, commit, tip);
}

test("one-shot bounded listings read the order file and answer as a long-running process, through every kind of change", async () => {
  const repo = viewsRepo(F);
  await sameAsLongRunning(repo, "agent-000", NOW, "first listing (the file written from every record)");
  assert.ok(existsSync(pathIn(repo)), "the first one-shot listing wrote the order file");
  assert.equal(fileState(repo), { garbage: 0, count: F.tasks });

  // Claims (records replaced in place), new tasks (new places: the first id, the best priority, one
  // dated before every other), a task finished, priorities changed by another clone: the file is patched.
  run(repo, "w1", NOW, "claim", "--next");
  run(repo, "w2", NOW, "claim", "--next");
  await sameAsLongRunning(repo, "agent-000", NOW, "after two claims");
  assert.ok(fileState(repo).garbage > 0, "patched: the two replaced lines left behind");
  const lead = { cwd: repo, agent: "lead", now: NOW };
  await storeTasks(lead, [{ id: "zz-best", objective: "the best", priority: 9 }, { id: "a-0", objective: "an early id", priority: 1 }]);
  await storeTasks({ ...lead, now: EARLY }, [{ id: "m-past", objective: "added late, dated before every other" }]);
  // Tasks that wait on others (done, not done, missing) and tasks addressed to some agents only.
  await storeTasks(lead, [
    { id: "w-done", objective: "waits on a done one", priority: 8, after: ["t-00003"] },
    { id: "w-open", objective: "waits on an open one", priority: 8, after: ["t-00000"] },
    { id: "w-gone", objective: "waits on a deleted one", priority: 8, after: ["t-00011"] },
  ]);
  gitOut(repo, "update-ref", "-d", `${TASKS_PREFIX}t-00011`);
  await storeTasks(lead, [
    { id: "to-codex", objective: "for codex only", priority: 8, to: "codex" },
    { id: "to-here", objective: "for anyone on this machine", priority: 8, to: "@nowhere-else" },
  ]);
  run(repo, "w3", NOW, "claim", "zz-best");
  run(repo, "w3", NOW, "done", "zz-best");
  rewriteRecord(repo, "t-00004", (r) => (r.priority = 7));
  rewriteRecord(repo, "t-00005", (r) => (r.priority = -3));
  await sameAsLongRunning(repo, "agent-000", NOW, "after new tasks, a task done and priorities changed");
  assert.is(fileState(repo).count, F.tasks + 7);
  // A ref deleted; refs packed (the key's packed part changes); claims run out, for their holder and for others.
  gitOut(repo, "update-ref", "-d", `${TASKS_PREFIX}t-00010`);
  await sameAsLongRunning(repo, "agent-000", NOW, "after a task ref was deleted");
  gitOut(repo, "pack-refs", "--all");
  await sameAsLongRunning(repo, "agent-000", NOW, "after the refs were packed");
  await sameAsLongRunning(repo, "agent-001", LATER, "claims run out (agent-001 holds some)");
  await sameAsLongRunning(repo, "w1", LATER, "claims run out (another agent)");
  const before = fileState(repo);
  assert.ok(before.garbage > 0, "still patched, never written afresh");
  assert.is(before.count, F.tasks + 6);

  // Every task ref with an earlier commit moved back to it at once: the lines replaced outweigh the
  // rest, and the file is written afresh from its lines (compacted).
  const moves = gitOut(repo, "for-each-ref", "--format=%(refname) %(objectname) %(parent)", TASKS_PREFIX)
    .split("\n")
    .map((l) => l.split(" "))
    .filter(([, , parent]) => !!parent);
  assert.ok(moves.length > F.tasks / 2, `most refs move (${moves.length})`);
  gitIn(repo, moves.map(([ref, tip, parent]) => `update ${ref} ${parent} ${tip}`).join("\n") + "\n", "update-ref", "--stdin");
  await sameAsLongRunning(repo, "agent-000", NOW, "after most refs moved at once");
  assert.is(fileState(repo).garbage, 0, "compacted");
  await sameAsLongRunning(repo, "agent-000", NOW, "read from the compacted file");
});

test("a one-shot claim --next takes, from the order file, the task a long-running process takes", async () => {
  // Two copies of one repository: one-shot claims (the CLI) in one, a long-running store's in the other.
  const [oneShot, longRunning] = [viewsRepo(F), viewsRepo(F)];
  for (const repo of [oneShot, longRunning]) {
    await storeTasks({ cwd: repo, agent: "lead", now: NOW }, [
      { id: "p-codex", objective: "for codex only", priority: 8, to: "codex" },
      { id: "p-open", objective: "waits on an open one", priority: 8, after: ["t-00000"] },
      { id: "p-done", objective: "waits on a done one", priority: 8, after: ["t-00003"] },
    ]);
  }
  run(oneShot, "agent-000", NOW, "task", "list", "--limit", "1"); // the order file, then patched by each claim
  assert.ok(existsSync(pathIn(oneShot)));
  const taken: string[] = [];
  for (let i = 0; i < 3; i++) {
    const agent = `n${i}`;
    const mine = run(oneShot, agent, NOW, "claim", "--next", "--json").json as { id: string };
    const store = await openStore({ cwd: longRunning, agent, env: cleanEnv({ HANDOFF_NOW: NOW }), warm: true });
    try {
      assert.is(mine.id, (await claimReady(store, 1_800_000)).id, `claim ${i + 1}`);
    } finally {
      store.close();
    }
    taken.push(mine.id);
  }
  assert.is(taken[0], "p-done", "the best ready one: waits on a done task; the one for codex and the blocked one skipped");
  assert.ok(fileState(oneShot).garbage > 0, "each claim patched the file");
  // The candidates come from the file: one that says every task is done leaves none.
  run(oneShot, "agent-000", NOW, "task", "list", "--limit", "1");
  const path = pathIn(oneShot);
  const text = readFileSync(path, "latin1");
  writeFileSync(path, text.replace(/"codes":"([a-f]+)"/, (_, codes: string) => `"codes":"${"c".repeat(codes.length)}"`), "latin1");
  const none = cli(["claim", "--next"], { cwd: oneShot, agent: "n9", env: { HANDOFF_NOW: NOW } });
  assert.is(none.code, 3, none.stderr);
  assert.match(none.stderr, /no task is ready/);
});

test("`task list --limit` parses the records it returns; a line out of shape or a file of other refs is only a slower read", () => {
  const repo = viewsRepo(F);
  const path = pathIn(repo);
  const list = (...args: string[]) => run(repo, "agent-000", NOW, "task", "list", ...args).stdout;
  const first = list("--limit", "3");
  assert.ok(existsSync(path));
  // The first three oldest are returned; every other line is made unreadable (same length): a listing
  // of three from the file still answers, and the objective of a returned one comes from the file.
  const bytes = readFileSync(path);
  const text = bytes.toString("latin1");
  const damaged = Buffer.from(text.replace(/"objective":"task 1"/, '"objective":"TASK 1"').replace(/\{"id":"t-(?!0000[0-2]")/g, (m) => "X" + m.slice(1)), "latin1");
  assert.is(damaged.length, bytes.length);
  writeFileSync(path, damaged);
  const poisoned = list("--limit", "3");
  assert.match(poisoned, /TASK 1/, "read from the file");
  assert.is(poisoned.replace("TASK 1", "task 1"), first);
  // A listing that needs a damaged line reads every record instead (and says nothing of it).
  const all = list("--limit", "100");
  assert.match(all, /t-00099/);
  assert.not.match(all, /TASK 1/, "read again from the records");
  assert.ok(!existsSync(path), "the damaged file removed (a patch would have copied its lines along)");
  assert.is(list("--limit", "3"), first);
  assert.equal(fileState(repo), { garbage: 0, count: F.tasks }, "written anew");
  // A file cut short, or with a trailer out of shape: no file (read from the records, written anew).
  for (const cut of [bytes.subarray(0, bytes.length - 10), Buffer.concat([bytes.subarray(0, bytes.length - 48), Buffer.from("x".repeat(47) + "\n")])]) {
    writeFileSync(path, cut);
    assert.is(list("--limit", "3"), first);
    assert.equal(fileState(repo), { garbage: 0, count: F.tasks }, "written afresh");
  }
  // `ready --limit`: the best N and how many more; a bad limit is refused.
  const ready = run(repo, "agent-000", NOW, "ready", "--limit", "2").stdout.trimEnd().split("\n");
  assert.is(ready.length, 3, ready.join("\n"));
  assert.match(ready[2]!, /^\(\d+ more ready, best first; raise --limit\)$/);
  const bad = cli(["ready", "--limit", "0"], { cwd: repo, agent: "agent-000" });
  assert.is(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /--limit/);
  // Under the listing threshold there is no file at all.
  const small = tempRepo();
  run(small, "lead", NOW, "task", "add", "one task");
  assert.match(run(small, "agent-000", NOW, "task", "list", "--limit", "3").stdout, /one task/);
  assert.ok(!existsSync(pathIn(small)), "no order file under LISTING_AT tasks");
});

test("a patch parses only the records that moved and keeps the other lines as they were", async () => {
  const repo = viewsRepo(F);
  const env = cleanEnv({ HANDOFF_NOW: NOW });
  const oneShot = async (q: { status?: TaskStatus; limit: number }) => {
    const store = await openStore({ cwd: repo, agent: "agent-000", env });
    try {
      recordsParsed.count = 0;
      return await listTasksBounded(store, q);
    } finally {
      store.close();
    }
  };
  await oneShot({ limit: 5 });
  recordsParsed.count = 0;
  await oneShot({ limit: 5 });
  assert.is(recordsParsed.count, 5, "five returned, five parsed");
  run(repo, "w1", NOW, "claim", "--next");
  const r = await oneShot({ status: "done", limit: 3 });
  assert.is(r.tasks.length, 3);
  // The claim moved one ref: the patch looks up its place (a binary search by id: a few dozen
  // records at most), then the listing parses its three.
  assert.ok(recordsParsed.count < 40, `parsed ${recordsParsed.count} of ${F.tasks}`);
});

test("a patch of a file replaced since it was read writes nothing", async () => {
  const repo = viewsRepo(F);
  const path = pathIn(repo);
  run(repo, "agent-000", NOW, "task", "list", "--limit", "3");
  const old = OrderFile.readTail(path)!;
  // Another process's file in its place (a claim moved a ref; the next listing patched the file).
  run(repo, "w1", NOW, "claim", "--next");
  run(repo, "agent-000", NOW, "task", "list", "--limit", "3");
  const theirs = readFileSync(path);
  const store = await openStore({ cwd: repo, agent: "agent-000", env: cleanEnv({ HANDOFF_NOW: NOW }) });
  try {
    const key = viewKey(store.listRefParts(TASKS_PREFIX)!)!;
    const from = Array.from({ length: old.count }, (_, i) => i);
    patchOrderFile(path, old, key, old.head, from, [], old.garbage);
  } finally {
    store.close();
    old.close();
  }
  assert.equal(readFileSync(path), theirs, "the other process's file stands");
  assert.equal(readdirSync(join(repo, ".git/handoff")).filter((f) => f.endsWith(".tmp")), [], "no temp file left");
});

test.run();
