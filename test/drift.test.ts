// Drift from the declaration, end to end: two agents in linked worktrees, the real hook and CLI.
// An edit outside what an agent declared gives one notice and one event and shows in `status`
// (and so do its commits and uncommitted files); a claim renewed while its branch stands still is
// flagged with the scripted clock.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { declarationOf, isPossiblyStuck, undeclaredPaths } from "../src/core/declaration.ts";
import type { Lease } from "../src/core/lease.ts";
import type { Task } from "../src/core/task.ts";
import { buildSnapshot } from "../src/dashboard/snapshot.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanEnv, cleanupTemp, cli, gitOut, type CliResult } from "./support/repo.ts";
import { team, MIN, type Team } from "./support/team.ts";

test.after(cleanupTemp);

function ok(r: CliResult, what = "command"): CliResult {
  assert.is(r.code, 0, `${what}: ${r.stderr}`);
  return r;
}

function edit(t: Team, agent: string, file: string, env: NodeJS.ProcessEnv = {}): string {
  const dir = t.wt[agent]!;
  const payload = { session_id: `s-${agent}`, hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: join(dir, file), content: "x\n" }, cwd: dir };
  const r = ok(cli(["hook", "claude-pre-tool-use"], { cwd: dir, agent, input: JSON.stringify(payload), env }), "hook");
  return r.json?.hookSpecificOutput?.additionalContext ?? "";
}

function declaredTeam(): Team {
  const t = team(["alice", "bob", "carol"]);
  ok(t.as("alice", ["session", "start", "--objective", "the api", "--files", "src/api/**"]));
  ok(t.as("bob", ["session", "start", "--objective", "the ui", "--files", "src/ui/**"]));
  // carol declares nothing: no files, no task, no lease.
  ok(t.as("carol", ["session", "start", "--objective", "looking around"]));
  return t;
}

test("an edit outside the declaration: one notice, one event, shown in status; inside it or undeclared agents: nothing", () => {
  const t = declaredTeam();
  const first = edit(t, "bob", "docs/readme.md");
  assert.match(first, /^git-handoff notice: docs\/readme\.md is outside what you declared \(src\/ui\/\*\*\); not blocked, recorded\./);
  assert.not.match(edit(t, "bob", "docs/readme.md"), /notice/, "once per agent and path");
  assert.is(edit(t, "bob", "src/ui/app.ts"), "", "inside the declaration");
  assert.is(edit(t, "carol", "anything/at/all.txt"), "", "no declaration, nothing to drift from");

  const events = ok(t.as("bob", ["events", "--type", "undeclared_edit", "--json"])).json;
  assert.is(events.length, 1);
  assert.is(events[0].agent, "bob");
  assert.equal(events[0].paths, ["docs/readme.md"]);

  const status = ok(t.as("alice", ["status", "--json", "--no-conflicts"])).json;
  assert.equal(status.drift.agents.map((a: { agent: string; undeclared: string[] }) => [a.agent, a.undeclared]), [["bob", ["docs/readme.md"]]]);
  assert.match(ok(t.as("alice", ["status", "--no-conflicts"])).stdout, /undeclared \(changed outside what the agent declared\)\n {2}bob {2}docs\/readme\.md {2}\(declared src\/ui\/\*\*\)/);
  const stats = ok(t.as("alice", ["stats", "--json"])).json;
  assert.equal(stats.drift, { notices: 1, paths: 1, agents: 1 });
  assert.match(ok(t.as("alice", ["stats"])).stdout, /undeclared edits +1 notice \(1 path outside a declaration, 1 agent\)/);
});

test("the dashboard's snapshot carries the same drift", async () => {
  const t = declaredTeam();
  edit(t, "bob", "docs/readme.md");
  const store = await openSyncedStore({ cwd: t.repo, agent: "lead", env: cleanEnv() });
  try {
    const snap = await buildSnapshot(store, { merges: new Map(), commits: new Map(), lastSync: null }, true);
    assert.equal(snap.drift.agents.map((a) => [a.agent, a.undeclared]), [["bob", ["docs/readme.md"]]]);
    assert.equal(snap.drift.stuck, []);
  } finally {
    store.close();
  }
});

test("status sees what git sees without any hook: committed on the branch and uncommitted in the worktree", () => {
  const t = declaredTeam();
  mkdirSync(join(t.wt.alice!, "lib"), { recursive: true });
  writeFileSync(join(t.wt.alice!, "lib", "helper.ts"), "export {};\n");
  gitOut(t.wt.alice!, "add", "lib/helper.ts");
  gitOut(t.wt.alice!, "commit", "-q", "-m", "a helper outside src/api");
  mkdirSync(join(t.wt.alice!, "src", "api"), { recursive: true });
  writeFileSync(join(t.wt.alice!, "src", "api", "users.ts"), "declared\n");
  writeFileSync(join(t.wt.alice!, "notes.txt"), "scratch\n");
  const status = ok(t.as("bob", ["status", "--json", "--no-conflicts"])).json;
  const alice = status.drift.agents.find((a: { agent: string }) => a.agent === "alice");
  assert.ok(alice, JSON.stringify(status.drift));
  assert.equal([...alice.undeclared].sort(), ["lib/helper.ts", "notes.txt"]);
  assert.is(alice.count, 2);
});

test("a claimed task's scope and a deliberate lease declare; a lease taken by a first edit does not", () => {
  const t = declaredTeam();
  ok(t.as("bob", ["task", "add", "--id", "lib", "--scope", "lib/**", "--", "the library"]));
  ok(t.as("bob", ["claim", "lib"]));
  ok(t.as("bob", ["lease", "config/app.json"]));
  assert.is(edit(t, "bob", "lib/x.ts"), "");
  assert.is(edit(t, "bob", "config/app.json"), "");
  // Pure: an auto lease is no declaration.
  const now = new Date("2030-01-01T00:00:00Z");
  const lease = (pattern: string, auto: boolean): Lease => ({ pattern, agent: "bob", task: null, exclusive: false, acquired_at: now.toISOString(), expires_at: "2030-01-01T01:00:00.000Z", ttl_ms: 3_600_000, reason: null, ...(auto ? { auto: true } : {}), worktree: null, branch: null, scope: "ephemeral" });
  const d = declarationOf("bob", null, [], [lease("a.ts", true), lease("b.ts", false)], now);
  assert.equal(d?.globs, ["b.ts"]);
  assert.equal(undeclaredPaths(d, ["a.ts", "b.ts"]), ["a.ts"]);
  assert.is(declarationOf("bob", null, [], [lease("a.ts", true)], now), null);
});

test("a claim renewed while its branch stands still is flagged as possibly stuck (scripted clock)", () => {
  const t = declaredTeam();
  const t0 = Date.now();
  const at = (ms: number) => ({ HANDOFF_NOW: new Date(t0 + ms).toISOString() });
  ok(t.as("alice", ["task", "add", "--id", "api", "--scope", "src/api/**", "--", "the api"], at(0)));
  ok(t.as("alice", ["claim", "api", "--ttl", "2h"], at(0)));
  ok(t.as("bob", ["task", "add", "--id", "ui", "--scope", "src/ui/**", "--", "the ui"], at(0)));
  ok(t.as("bob", ["claim", "ui", "--ttl", "3h"], at(0)));
  const stuck = (ms: number) => ok(t.as("carol", ["status", "--json", "--no-conflicts"], at(ms))).json.drift.stuck.map((s: { task: string }) => s.task);
  // Renewed at 45 minutes, looked at 50 minutes in: under the default hour.
  ok(t.as("alice", ["renew", "api", "--ttl", "2h"], at(45 * MIN)));
  assert.equal(stuck(50 * MIN), []);
  // Renewed again at 100 minutes, the branch still where it was: flagged. bob's claim was never
  // renewed (its lease just runs), so it is not.
  ok(t.as("alice", ["renew", "api", "--ttl", "2h"], at(100 * MIN)));
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

test.run();
