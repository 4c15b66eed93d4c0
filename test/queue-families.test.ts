// A look at the remote's task queue (workers, MCP watch) reads only the families a claim needs:
// one listing of the tasks, their inputs and the lease set, then a fetch of just the refs of those
// families that moved. Refs of other families that moved meanwhile (a memory) wait for the next
// sync, which still brings them: the clones converge.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { followQueue } from "../src/sync/follow-queue.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { readTraffic } from "../src/sync/remote-traffic.ts";
import { createHandover, readInputs } from "../src/work/handover.ts";
import { addTask } from "../src/store/task-store.ts";
import { cleanEnv, cleanupTemp, cli, gitOut } from "./support/repo.ts";
import { twoClones } from "./support/servers.ts";

test.after(cleanupTemp);


const refsOf = (cwd: string, prefix: string) => gitOut(cwd, "for-each-ref", "--format=%(refname)", prefix).split("\n").filter(Boolean);

test("a queue look fetches the new task and its inputs in one listing and one fetch, and leaves other families to sync", async () => {
  const { a, b } = twoClones();
  // A memory first (pushed by a sync), then a task with an input file (pushed at once).
  assert.is(cli(["memory", "add", "the parser lives in src/parse"], { cwd: a, agent: "alice" }).code, 0);
  assert.is(cli(["sync"], { cwd: a, agent: "alice" }).code, 0);
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
    assert.equal(calls, ["ls-remote", "fetch"], "one listing of the queue's families, one fetch of what moved");
  } finally {
    store.close();
  }
  // The next sync brings the rest: both clones hold the same refs/handoff/*.
  assert.is(cli(["sync"], { cwd: b, agent: "bob" }).code, 0);
  assert.is(refsOf(b, "refs/handoff/memories/").length, 1);
  const tips = (cwd: string) => gitOut(cwd, "for-each-ref", "--format=%(objectname) %(refname)", "refs/handoff/tasks/", "refs/handoff/inputs/", "refs/handoff/memories/");
  assert.is(tips(b), tips(a));
});

test("a look with nothing new in the queue's families fetches nothing, however other families moved", async () => {
  const { a, b } = twoClones();
  assert.is(cli(["task", "add", "first", "--id", "f1", "--push"], { cwd: a, agent: "alice" }).code, 0);
  const store = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
  try {
    const f = followQueue(store, "origin");
    assert.equal(await f.look(), { ok: true, changed: true });
    assert.is(cli(["memory", "add", "a note"], { cwd: a, agent: "alice" }).code, 0);
    assert.is(cli(["sync"], { cwd: a, agent: "alice" }).code, 0);
    const from = Date.now() - 1;
    assert.equal(await f.look(), { ok: true, changed: false });
    assert.equal(readTraffic(store, "origin", from).map((c) => c.kind), ["ls-remote"]);
  } finally {
    store.close();
  }
});

test("more moved refs than one named fetch takes: the look refreshes everything instead, and every task arrives", async () => {
  const { a, b } = twoClones();
  const sa = await openSyncedStore({ cwd: a, agent: "alice", env: cleanEnv(), warm: true });
  try {
    for (let i = 0; i < 205; i++) await addTask(sa, { id: `many-${i}`, objective: `task ${i}`, priority: 0, scope: [], maxAttempts: 3 });
  } finally {
    sa.close();
  }
  assert.is(cli(["memory", "add", "a note"], { cwd: a, agent: "alice" }).code, 0);
  assert.is(cli(["sync"], { cwd: a, agent: "alice" }).code, 0);
  const store = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
  try {
    const from = Date.now() - 1;
    assert.equal(await followQueue(store, "origin").look(), { ok: true, changed: true });
    assert.is(refsOf(b, "refs/handoff/tasks/").length, 205);
    // The whole refresh lists every family and fetches them all at once: the memory came too.
    assert.is(refsOf(b, "refs/handoff/memories/").length, 1);
    assert.equal(readTraffic(store, "origin", from).map((c) => c.kind), ["ls-remote", "ls-remote", "fetch"]);
  } finally {
    store.close();
  }
});

test.run();
