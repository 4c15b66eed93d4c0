// A sync with nothing new is one listing of the remote and nothing else: no fetch, no push, no
// ref written. The listing goes out before the local refs are read (both at once); what another
// clone pushed meanwhile is brought by the sync that follows, and the clones end identical.
import { statSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openSyncedStore } from "../src/sync/open.ts";
import { readTraffic } from "../src/sync/remote-traffic.ts";
import { sync } from "../src/sync/sync.ts";
import { addTask } from "../src/store/task-store.ts";
import { cleanEnv, cleanupTemp, cli, gitOut } from "./support/repo.ts";
import { storeSync, storeTasks } from "./support/seed.ts";
import { twoClones } from "./support/servers.ts";

test.after(cleanupTemp);


/** A file's identity and time: a rewrite (temp file renamed over it) changes the inode. */
const stamp = (path: string) => {
  const st = statSync(path, { throwIfNoEntry: false });
  return st ? `${st.ino}:${st.mtimeMs}` : "missing";
};

const handoffRefs = (cwd: string) => gitOut(cwd, "for-each-ref", "--format=%(objectname) %(refname)", "refs/handoff/", "refs/handoff-remotes/");

test("a sync with nothing new lists the remote once and changes nothing; the next change arrives with the next sync", async () => {
  const { a, b } = twoClones();
  await storeTasks({ cwd: a, agent: "alice" }, ["n1", "n2", "n3"].map((id) => ({ id, objective: `task ${id}` })));
  await storeSync({ cwd: a, agent: "alice" });
  await storeSync({ cwd: b, agent: "bob" });
  const store = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
  try {
    await sync(store); // the first sync of this process reads its caches
    const refsBefore = handoffRefs(b);
    const caches = ["compact.json", "clock-origin.json"].map((f) => `${b}/.git/handoff/${f}`);
    const cachesBefore = caches.map(stamp);
    const from = Date.now() - 1;
    const quiet = await sync(store);
    assert.equal([quiet.fetched, quiet.pushed, quiet.replayed, quiet.removed], [[], [], [], []]);
    assert.equal(readTraffic(store, "origin", from).map((c) => c.kind), ["ls-remote"], "one listing, no fetch, no push");
    assert.is(handoffRefs(b), refsBefore, "no ref written");
    // Nor the caches that only change with the refs (a running server syncs often).
    assert.equal(caches.map(stamp), cachesBefore, "the finish cache and the clock observations are not rewritten");
    assert.ok(cachesBefore[0] !== "missing", "the finish cache exists");

    // Another clone adds a task and this one adds its own: the next sync takes one, pushes the other.
    assert.is(cli(["task", "add", "from a", "--id", "n4", "--push"], { cwd: a, agent: "alice" }).code, 0);
    await addTask(store, { id: "n5", objective: "from b", priority: 0, scope: [], maxAttempts: 3 });
    const next = await sync(store);
    assert.equal(next.fetched, ["refs/handoff/tasks/n4"]);
    assert.equal(next.pushed, ["refs/handoff/tasks/n5"]);
  } finally {
    store.close();
  }
  assert.is(cli(["sync"], { cwd: a, agent: "alice" }).code, 0);
  const tips = (cwd: string) => gitOut(cwd, "for-each-ref", "--format=%(objectname) %(refname)", "refs/handoff/tasks/");
  assert.is(tips(a), tips(b));
  assert.is(tips(a).split("\n").length, 5);
});

test.run();
