// A waiter's warm-up before its first look (follow-ref.ts readyToReceive) judges the local tips
// as a receive would and changes nothing: no ref moves, and a ref it cannot judge (missing, not a
// commit, a family this build does not know) is passed over without an error.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, gitOut, handoffRefs, seedTasks, tempRepo } from "./support/repo.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { readyToReceive } from "../src/sync/follow-ref.ts";

test.after(cleanupTemp);

test("readyToReceive reads, writes nothing, and passes over refs it cannot judge", async () => {
  const repo = tempRepo();
  await seedTasks(repo, [{ id: "t1" }]);
  // A task ref that points at a blob: what a hostile remote could have left, were it not screened.
  const blob = gitOut(repo, "hash-object", "-w", "--stdin");
  gitOut(repo, "update-ref", "refs/handoff/tasks/bad", blob);
  const before = handoffRefs(repo, { logs: true });
  const files = gitOut(repo, "count-objects", "-v");
  const store = await openSyncedStore({ cwd: repo, agent: "waiter" });
  try {
    await readyToReceive(store, ["refs/handoff/tasks/t1", "refs/handoff/results/t1", "refs/handoff/tasks/bad", "refs/handoff/nosuchfamily/x", "refs/handoff/tasks/missing"]);
  } finally {
    store.close();
  }
  assert.is(handoffRefs(repo, { logs: true }), before);
  assert.is(gitOut(repo, "count-objects", "-v"), files, "no object written");
});

test.run();
