// A look at the remote's task queue (workers, MCP watch) reads only the families a claim needs:
// one fetch of the tasks, their inputs and the lease set, whose advertisement covers just those
// families and which transfers only what moved. Refs of other families that moved meanwhile (a memory) wait for the next
// sync, which still brings them: the clones converge.
// That look is git fetch's glob: a remote fetched in process (by path, stream-remote.ts) is listed
// first and fetched by name, so the remote is git's here (HANDOFF_PATH_REMOTE=git) but in the last
// test, which looks at the in-process way.
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { followQueue } from "../src/sync/follow-queue.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { readTraffic } from "../src/sync/remote-traffic.ts";
import { createHandover, readInputs } from "../src/work/handover.ts";
import { cleanEnv, cleanupTemp, cli, gitOut, seedTasks } from "./support/repo.ts";
import { storeClaim, storeMemory, storeSync, storeTasks } from "./support/seed.ts";
import { twoClones } from "./support/servers.ts";

test.after(cleanupTemp);
process.env.HANDOFF_PATH_REMOTE = "git";


const refsOf = (cwd: string, prefix: string) => gitOut(cwd, "for-each-ref", "--format=%(refname)", prefix).split("\n").filter(Boolean);

test("a queue look fetches the new task and its inputs in one fetch, and leaves other families to sync", async () => {
  const { a, b } = twoClones();
  // A memory first (pushed by a sync), then a task with an input file (pushed at once).
  // The memory, and the moves below that a look must see or leave: written in-process (support/seed.ts).
  await storeMemory({ cwd: a, agent: "alice" }, "the parser lives in src/parse");
  await storeSync({ cwd: a, agent: "alice" });
  writeFileSync(join(a, "notes.txt"), "read me\n");
  const sa = await openSyncedStore({ cwd: a, agent: "alice", env: cleanEnv() });
  let id: string;
  try {
    sa.syncOptions = { ...sa.syncOptions, push: true };
    id = (await createHandover(sa, { objective: "parse it", priority: 0, to: null, inputs: readInputs(a, [], ["notes.txt"]) })).id;
  } finally {
    sa.close();
  }
  const store = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
  try {
    const from = Date.now() - 1;
    assert.equal(await followQueue(store, "origin").look(), { ok: true, changed: true });
    assert.ok(await store.readRef(`refs/handoff/tasks/${id}`), "the task arrived");
    assert.ok(await store.readRef(`refs/handoff/inputs/${id}`), "its inputs arrived with it");
    assert.equal(refsOf(b, "refs/handoff/memories/"), [], "the memory's family was neither listed nor fetched");
    assert.equal(refsOf(b, "refs/handoff-remotes/origin/memories/"), []);
    const calls = readTraffic(store, "origin", from).map((c) => c.kind);
    assert.equal(calls, ["fetch"], "one fetch of the queue's families");
  } finally {
    store.close();
  }
  // The next sync brings the rest: both clones hold the same refs/handoff/*.
  assert.is(cli(["sync"], { cwd: b, agent: "bob" }).code, 0);
  assert.is(refsOf(b, "refs/handoff/memories/").length, 1);
  const tips = (cwd: string) => gitOut(cwd, "for-each-ref", "--format=%(objectname) %(refname)", "refs/handoff/tasks/", "refs/handoff/inputs/", "refs/handoff/memories/");
  assert.is(tips(b), tips(a));
});

test("a look with nothing new in the queue's families changes nothing here, however other families moved", async () => {
  const { a, b } = twoClones();
  await storeTasks({ cwd: a, agent: "alice", push: true }, [{ id: "f1", objective: "first" }]);
  const store = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
  try {
    const f = followQueue(store, "origin");
    assert.equal(await f.look(), { ok: true, changed: true });
    await storeMemory({ cwd: a, agent: "alice" }, "a note");
    await storeSync({ cwd: a, agent: "alice" });
    const from = Date.now() - 1;
    const before = refsOf(b, "refs/");
    assert.equal(await f.look(), { ok: true, changed: false });
    assert.equal(readTraffic(store, "origin", from).map((c) => c.kind), ["fetch"]);
    assert.equal(refsOf(b, "refs/"), before, "no ref came or went: the memory waits for sync");
  } finally {
    store.close();
  }
});

test("205 new tasks arrive in the one fetch of a look; the other families still wait for sync", async () => {
  const { a, b } = twoClones();
  await seedTasks(a, Array.from({ length: 205 }, (_, i) => ({ id: `many-${i}` })), "alice");
  await storeMemory({ cwd: a, agent: "alice" }, "a note");
  await storeSync({ cwd: a, agent: "alice" });
  const store = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
  try {
    const from = Date.now() - 1;
    assert.equal(await followQueue(store, "origin").look(), { ok: true, changed: true });
    assert.is(refsOf(b, "refs/handoff/tasks/").length, 205);
    assert.equal(refsOf(b, "refs/handoff/memories/"), []);
    assert.equal(readTraffic(store, "origin", from).map((c) => c.kind), ["fetch"]);
    // Now past 200 tracked tasks, a look lists the families first and fetches what moved.
    await storeTasks({ cwd: a, agent: "alice", push: true }, [{ id: "more", objective: "one more" }]);
    const later = Date.now() - 1;
    assert.equal(await followQueue(store, "origin").look(), { ok: true, changed: true });
    assert.ok(await store.readRef("refs/handoff/tasks/more"), "the new task arrived");
    assert.equal(readTraffic(store, "origin", later).map((c) => c.kind), ["ls-remote", "fetch"]);
  } finally {
    store.close();
  }
});

test("the lease set gone from the remote: the look lists first, and still brings the new task", async () => {
  const { a, b, bare } = twoClones();
  await storeTasks({ cwd: a, agent: "alice", push: true }, [{ id: "s1", objective: "scoped", scope: ["src/**"] }]);
  await storeClaim({ cwd: a, agent: "alice" }, "s1");
  // A look fetches the lease set by name once it is tracked (a sync brought it here).
  await storeSync({ cwd: b, agent: "bob" });
  const store = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
  try {
    const f = followQueue(store, "origin");
    assert.ok(await store.readRef("refs/handoff-remotes/origin/leases"), "the lease set is tracked");
    // An odd remote (or a hand) removes the lease set; a new task comes.
    gitOut(bare, "update-ref", "-d", "refs/handoff/leases");
    await storeTasks({ cwd: a, agent: "alice", push: true }, [{ id: "n1", objective: "next" }]);
    const from = Date.now() - 1;
    assert.equal(await f.look(), { ok: true, changed: true });
    assert.ok(await store.readRef("refs/handoff/tasks/n1"), "the new task arrived");
    assert.equal(readTraffic(store, "origin", from).map((c) => c.kind), ["fetch", "ls-remote", "fetch"], "the exact fetch failed, the listing told what moved");
  } finally {
    store.close();
  }
});

test("in process, a look lists the queue's families and fetches what moved by name, 205 tasks in one pack kept whole; the memory waits for sync", async () => {
  const { a, b } = twoClones();
  await seedTasks(a, Array.from({ length: 205 }, (_, i) => ({ id: `many-${i}` })), "alice");
  await storeMemory({ cwd: a, agent: "alice" }, "a note");
  await storeSync({ cwd: a, agent: "alice" });
  delete process.env.HANDOFF_PATH_REMOTE;
  const store = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
  try {
    const from = Date.now() - 1;
    assert.equal(await followQueue(store, "origin").look(), { ok: true, changed: true });
    assert.is(refsOf(b, "refs/handoff/tasks/").length, 205);
    assert.equal(refsOf(b, "refs/handoff/memories/"), [], "the memory's family was neither listed nor fetched");
    assert.equal(refsOf(b, "refs/handoff-remotes/origin/memories/"), []);
    // One listing (the remote's files), then the names in one fetch of this process's (more than a
    // git fetch's command line takes: parts of 500).
    assert.equal(readTraffic(store, "origin", from).map((c) => c.kind), ["ls-remote", "fetch"]);
    // Its 615 objects kept as the pack they came in, not as loose files (keep-pack.ts), and the
    // .keep that guarded them until the refs moved is gone.
    const loose = Number(/^count: (\d+)$/m.exec(gitOut(b, "count-objects", "-v"))![1]);
    assert.ok(loose < 100, `${loose} loose objects`);
    assert.equal(readdirSync(join(b, ".git/objects/pack")).filter((f) => f.endsWith(".keep")), []);
  } finally {
    store.close();
    process.env.HANDOFF_PATH_REMOTE = "git";
  }
});

test.run();
