// Claims that look stuck: the lease keeps being renewed while the holder's branch does not move.
// Two agents in linked worktrees, the real CLI, the scripted clock (HANDOFF_NOW).
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isPossiblyStuck } from "../src/core/declaration.ts";
import type { Task } from "../src/core/task.ts";
import { cleanupTemp, gitOut, type CliResult } from "./support/repo.ts";
import { storeClaim, storeRenew, storeTasks, type Actor } from "./support/seed.ts";
import { team, MIN, type Team } from "./support/team.ts";

test.after(cleanupTemp);

function ok(r: CliResult, what = "command"): CliResult {
  assert.is(r.code, 0, `${what}: ${r.stderr}`);
  return r;
}

/** `agent` in its worktree at `ms` after `t0`: the tasks, claims and renewals, written in-process (support/seed.ts). */
const by = (t: Team, agent: string, t0: number, ms: number): Actor => ({ cwd: t.wt[agent]!, agent, now: new Date(t0 + ms).toISOString() });

test("a claim renewed while its branch stands still is flagged as possibly stuck (scripted clock)", async () => {
  const t = team(["alice", "bob", "carol"]);
  const t0 = Date.now();
  const at = (ms: number) => ({ HANDOFF_NOW: new Date(t0 + ms).toISOString() });
  await storeTasks(by(t, "alice", t0, 0), [{ id: "api", objective: "the api", scope: ["src/api/**"] }]);
  await storeClaim(by(t, "alice", t0, 0), "api", { ttl: "2h" });
  await storeTasks(by(t, "bob", t0, 0), [{ id: "ui", objective: "the ui", scope: ["src/ui/**"] }]);
  await storeClaim(by(t, "bob", t0, 0), "ui", { ttl: "3h" });
  const stuck = (ms: number) => ok(t.as("carol", ["status", "--json", "--no-conflicts"], at(ms))).json.drift.stuck.map((s: { task: string }) => s.task);
  // Renewed at 45 minutes, looked at 50 minutes in: under the default hour.
  await storeRenew(by(t, "alice", t0, 45 * MIN), "api", { ttl: "2h" });
  assert.equal(stuck(50 * MIN), []);
  // Renewed again at 100 minutes, the branch still where it was: flagged. bob's claim was never
  // renewed (its lease just runs), so it is not.
  await storeRenew(by(t, "alice", t0, 100 * MIN), "api", { ttl: "2h" });
  assert.equal(stuck(101 * MIN), ["api"]);
  assert.match(ok(t.as("carol", ["status", "--no-conflicts"], at(101 * MIN))).stdout, /possibly stuck \(lease renewed, branch not moving\)\n {2}api {2}alice {2}alice-work still for 101m/);
  // A commit on the branch at 90 minutes moves it: no longer flagged.
  const dir = t.wt.alice!;
  writeFileSync(join(dir, "shared.txt"), "moved\n");
  gitOut(dir, "add", "shared.txt");
  const when = new Date(t0 + 90 * MIN).toISOString();
  spawnSync("git", ["commit", "-q", "-m", "progress"], { cwd: dir, env: { ...process.env, GIT_COMMITTER_DATE: when, GIT_AUTHOR_DATE: when } });
  assert.equal(stuck(101 * MIN), []);
  // The threshold is configurable.
  const task = (claimedMs: number, renewedMs: number, ttl: number): Task => ({ id: "x", objective: "x", status: "claimed", priority: 0, scope: [], attempts: 0, max_attempts: 3, fence: 1, created_by: "a", created_at: new Date(t0).toISOString(), updated_at: new Date(t0).toISOString(), result: null, claim: { agent: "a", claimed_at: new Date(t0 + claimedMs).toISOString(), expires_at: new Date(t0 + renewedMs + ttl).toISOString(), fence: 1, ttl_ms: ttl, worktree: null, branch: null, scope: "ephemeral" } });
  assert.ok(isPossiblyStuck({ task: task(0, 20 * MIN, 30 * MIN), branchMovedAt: null }, new Date(t0 + 21 * MIN), 15 * MIN));
  assert.not.ok(isPossiblyStuck({ task: task(0, 20 * MIN, 30 * MIN), branchMovedAt: null }, new Date(t0 + 21 * MIN), 30 * MIN));
});

test("each stuck claim is judged by its own branch's last move, claims on branches in turn (scripted clock)", async () => {
  const t = team(["alice", "bob", "carol", "dave"]);
  const t0 = Date.now();
  const at = (ms: number) => ({ HANDOFF_NOW: new Date(t0 + ms).toISOString() });
  // In the tasks' order: a1 on alice-work, b1 on bob-work, c1 on carol-work; each renewed at 100 minutes.
  for (const [agent, id] of [["alice", "a1"], ["bob", "b1"], ["carol", "c1"]] as const) {
    await storeTasks(by(t, agent, t0, 0), [{ id, objective: id }]);
    await storeClaim(by(t, agent, t0, 0), id, { ttl: "2h" });
    await storeRenew(by(t, agent, t0, 100 * MIN), id, { ttl: "2h" });
  }
  // bob's branch moved at 90 minutes, the others stand still: only a1 and c1 look stuck.
  const dir = t.wt.bob!;
  writeFileSync(join(dir, "bob.txt"), "moved\n");
  gitOut(dir, "add", "bob.txt");
  const when = new Date(t0 + 90 * MIN).toISOString();
  spawnSync("git", ["commit", "-q", "-m", "progress"], { cwd: dir, env: { ...process.env, GIT_COMMITTER_DATE: when, GIT_AUTHOR_DATE: when } });
  const stuck = (args: string[]) => ok(t.as("dave", ["status", "--json", "--no-conflicts", ...args], at(101 * MIN))).json.drift.stuck.map((s: { task: string; still_ms: number }) => [s.task, s.still_ms]);
  assert.equal(stuck([]), [["a1", 101 * MIN], ["c1", 101 * MIN]]);
  // The bounded text counts and shows the same claims.
  const text = ok(t.as("dave", ["status", "--no-conflicts"], at(101 * MIN))).stdout;
  assert.match(text, / {2}a1 {2}alice {2}alice-work still for 101m/);
  assert.match(text, / {2}c1 {2}carol {2}carol-work still for 101m/);
  assert.not.match(text, / {2}b1 {2}bob/);
});

test.run();
