// The dashboard marks what the sync remote holds from a newer git-handoff as `task list` and
// `leases` do (present/newer-note.ts, store/stale-leases.ts): the board's card of such a task
// carries newer_on_remote, and the lease view says why the leases shown may be stale. Checked on
// the state the server sends (/api/state is buildSnapshot's document), built in process.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { buildSnapshot } from "../src/dashboard/snapshot.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { futureLeaseSet, futureTask, NEWER_LEASES, newerProjectSeeded } from "./support/newer-remote.ts";
import { storeClaim, storeSync, storeTasks } from "./support/seed.ts";
import { cleanEnv, cleanupTemp, cli } from "./support/repo.ts";

test.after(cleanupTemp);

test("the board marks a task held back as newer, and the leases say the lease set may be stale", async () => {
  const { bare, a, b } = await newerProjectSeeded();
  await storeTasks({ cwd: a, agent: "alice", push: true }, [
    { id: "z", objective: "z" },
    { id: "y", objective: "y" },
  ]);
  await storeSync({ cwd: b, agent: "bob" });
  await storeClaim({ cwd: b, agent: "bob" }, "z", { ttl: "2h" });
  const snapshot = async () => {
    const store = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
    try {
      return await buildSnapshot(store, { merges: new Map(), commits: new Map(), lastSync: null }, true);
    } finally {
      store.close();
    }
  };
  const before = await snapshot();
  assert.equal(before.tasks.map((t) => [t.id, !!t.newer_on_remote]).sort(), [["y", false], ["z", false]]);
  assert.is(before.leases_newer, null);

  futureTask(bare, "z");
  futureLeaseSet(bare);
  assert.is(cli(["sync"], { cwd: b, agent: "bob" }).code, 3);
  const after = await snapshot();
  assert.equal(after.tasks.map((t) => [t.id, !!t.newer_on_remote]).sort(), [["y", false], ["z", true]]);
  const z = after.tasks.find((t) => t.id === "z")!;
  assert.equal([z.status, z.holder], ["claimed", "bob"], "the card is this clone's copy, marked");
  assert.match(after.leases_newer ?? "", NEWER_LEASES);
  assert.equal(after.leases.map((l) => l.lease.pattern), ["src/a.ts"], "the leases shown are this clone's copy");
});

test.run();
