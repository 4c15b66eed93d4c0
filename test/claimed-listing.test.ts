// A long-running store keeps the claimed tasks of its listing from one listing to the next
// (task-listing.ts patchedClaimed): the tasks claimed since put in place by age, those released
// taken out. After every claim and release of a shuffled run, the list must be the claimed
// tasks sorted by age, as a walk of the whole listing gives it.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { claim, release } from "../src/store/task-actions.ts";
import { listClaimedTasks, storedClaimedTasks } from "../src/store/task-listing.ts";
import { byAge, listTasks } from "../src/store/task-store.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanEnv, cleanupTemp, seedTasks, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("a warm store's claimed tasks stay in age order through claims and releases in any order", async () => {
  const repo = tempRepo();
  // Ids whose text order is not their age order.
  const ids = Array.from({ length: 14 }, (_, i) => `t-${String.fromCharCode(97 + ((i * 3) % 14))}${i}`);
  await seedTasks(repo, ids.map((id) => ({ id })));
  const store = await openSyncedStore({ cwd: repo, agent: "me", warm: true, env: cleanEnv() });
  try {
    await listClaimedTasks(store); // the listing read once, so later ones are patched from it
    // Every id once, out of their age order (a stride of 5 over 14 visits them all).
    const order = ids.map((_, i) => ids[(i * 5) % ids.length]!);
    const held = new Set<string>();
    for (const [n, id] of order.entries()) {
      await claim(store, id, { overCapacity: true });
      held.add(id);
      if (n % 4 === 3) {
        const out = [...held][n % held.size]!;
        await release(store, out);
        held.delete(out);
      }
      const { tasks } = await listTasks(store);
      const expected = tasks.filter((t) => held.has(t.id)).sort(byAge).map((t) => t.id);
      assert.equal((await listClaimedTasks(store)).map((t) => t.id), expected, `after claiming ${id}`);
      assert.equal((await storedClaimedTasks(store)).map((t) => t.id), expected, `stored, after claiming ${id}`);
    }
  } finally {
    store.close();
  }
});

test.run();
