// Many real CLI processes racing to claim the same task: compare-and-swap must grant it once, and
// every loser hears who won (support: claim-race.ts; 50 tasks raced through the store are in
// task-races-store.test.ts, racing `claim --next` in task-races-next.test.ts).
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, seedTasks, tempDir, tempRepo } from "./support/repo.ts";
import { checkRace, race, RACERS } from "./support/claim-race.ts";

test.after(cleanupTemp);

test(`${RACERS} CLI processes claim the same task at once, over 4 tasks: one winner each, the losers told who won`, async () => {
  const repo = tempRepo();
  const ids = Array.from({ length: 4 }, (_, i) => `race-${i}`);
  await seedTasks(repo, ids.map((id) => ({ id })));
  for (const id of ids) checkRace(repo, id, await race(id, [repo]));
  const claimed = cli(["tasks", "--status", "claimed", "--json"], { cwd: repo, agent: "lead" }).json;
  assert.is(claimed.length, 4);
});

test("the same race split across two linked worktrees of one repo", async () => {
  const repo = tempRepo();
  const wt = join(tempDir(), "other-wt");
  gitOut(repo, "worktree", "add", "-q", "-b", "other", wt);
  const ids = Array.from({ length: 4 }, (_, i) => `wt-race-${i}`);
  await seedTasks(wt, ids.map((id) => ({ id })));
  const branches = new Set<string>();
  for (const id of ids) {
    const results = await race(id, [repo, wt]);
    checkRace(repo, id, results);
    branches.add(results.find(([, r]) => r.code === 0)![1].json.claim.branch);
  }
  // both worktrees see the one ref, and the winners came from both sides over the run
  assert.is(gitOut(wt, "rev-parse", "refs/handoff/tasks/wt-race-0"), gitOut(repo, "rev-parse", "refs/handoff/tasks/wt-race-0"));
  assert.ok([...branches].every((b) => b === "main" || b === "other"));
});

test.run();
