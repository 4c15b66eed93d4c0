// MCP watch's look at the remote's task queue: a task pushed from another clone is fetched; a
// look another process of the clone took since this one's last is used instead of asking the
// remote again (shown by making the remote unreachable after the first look).
import { renameSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { followQueue } from "../src/sync/follow-queue.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanEnv, cleanupTemp, cli } from "./support/repo.ts";
import { twoClones } from "./support/servers.ts";

test.after(cleanupTemp);


test("a task pushed from A is fetched into B by one look; a second look with nothing new fetches nothing", async () => {
  const { a, b } = twoClones();
  assert.is(cli(["task", "add", "from a", "--id", "q1", "--push"], { cwd: a, agent: "alice" }).code, 0);
  const store = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
  try {
    assert.is(await store.readRef("refs/handoff/tasks/q1"), null);
    const f = followQueue(store, "origin");
    assert.equal(await f.look(), { ok: true, changed: true });
    assert.ok(await store.readRef("refs/handoff/tasks/q1"));
    assert.equal(await f.look(), { ok: true, changed: false });
    // A watcher that starts later does not take an old look for a fresh one: it asks.
    assert.is(cli(["task", "add", "later", "--id", "q1b", "--push"], { cwd: a, agent: "alice" }).code, 0);
    assert.equal(await followQueue(store, "origin").look(), { ok: true, changed: true });
    assert.ok(await store.readRef("refs/handoff/tasks/q1b"));
  } finally {
    store.close();
  }
});

test("two watchers of one clone: the second uses the first's look instead of asking the remote", async () => {
  const { bare, a, b } = twoClones();
  assert.is(cli(["task", "add", "from a", "--id", "q2", "--push"], { cwd: a, agent: "alice" }).code, 0);
  const store = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
  try {
    const first = followQueue(store, "origin");
    const second = followQueue(store, "origin");
    assert.equal(await first.look(), { ok: true, changed: true });
    renameSync(bare, `${bare}.gone`); // from here on, asking the remote fails
    assert.equal(await second.look(), { ok: true, changed: false }, "took the first watcher's look");
    const again = await first.look();
    assert.is(again.ok, false, "a look after its own last one asks the remote, which is gone");
  } finally {
    store.close();
  }
});

test.run();
