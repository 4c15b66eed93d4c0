// What each matching site tells its user about what it could not look at within its budget
// (core/match-budget.ts), end to end through the real CLI and hook: a path not judged against a
// declaration is never drift, but `status`, a heartbeat and the edit hook each say how many there
// were; a lease that cannot tell whether it touches a due claim says how to extend it; an ignore
// glob left out of the policy is said, from .gitattributes as from .handoff.yaml.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { costlyGlobs } from "./support/costly-globs.ts";
import { cleanupTemp, cli, type CliResult } from "./support/repo.ts";
import { team, type Team } from "./support/team.ts";

test.after(cleanupTemp);

const T0 = Date.parse("2026-06-01T10:00:00.000Z");
const at = (ms: number) => ({ HANDOFF_NOW: new Date(T0 + ms).toISOString() });

function ok(r: CliResult, what = "command"): CliResult {
  assert.is(r.code, 0, `${what}: ${r.stdout}${r.stderr}`);
  return r;
}

/** The claude pre-edit hook's answer for `file` in `agent`'s worktree. */
function edit(t: Team, agent: string, file: string, env: NodeJS.ProcessEnv): CliResult {
  const dir = t.wt[agent]!;
  const payload = { session_id: `s-${agent}`, cwd: dir, hook_event_name: "PreToolUse", tool_name: "Edit", tool_input: { file_path: join(dir, file), old_string: "a", new_string: "b" } };
  return ok(cli(["hook", "claude-pre-tool-use"], { cwd: dir, agent, input: JSON.stringify(payload), env }), "hook");
}

const undeclaredEdits = (t: Team) => ok(t.as("lead", ["events", "--type", "undeclared_edit", "--json"])).json as unknown[];

test("status and heartbeat: a changed path not judged against a costly declaration within the budget is counted and said, never drift", () => {
  const t = team(["alice"]);
  // 140 declared globs a fresh process compiles at ~16,600 units each: past a drift check's 2,000,000.
  ok(t.as("alice", ["session", "start", "--objective", "costly", ...costlyGlobs(0, 100).flatMap((g) => ["--files", g])]));
  ok(t.as("alice", ["lease", ...costlyGlobs(100, 40)]));
  writeFileSync(join(t.wt.alice!, "notes.txt"), "changed\n");

  const status = ok(t.as("lead", ["status", "--json", "--no-conflicts"])).json;
  assert.equal(status.drift.agents.map((a: { agent: string; undeclared: string[]; count: number; unjudged: number }) => [a.agent, a.undeclared, a.count, a.unjudged]), [["alice", [], 0, 1]]);
  const text = ok(t.as("lead", ["status", "--no-conflicts"])).stdout;
  assert.match(text, /\n {2}alice {2}could not tell whether 1 path it changed is outside what alice declared: its declared globs took more than the budget of matching a drift check may do \(2,000,000 units\), so some were not looked at; not counted\n/);

  const beat = ok(t.as("alice", ["heartbeat"]));
  assert.match(beat.stdout, /^heartbeat alice at \S+\nnote: could not tell whether 1 path changed in this worktree is outside what you declared: your declared globs took more than the budget of matching a drift check may do \(2,000,000 units\), so some were not looked at; not recorded as drift\n$/);
  assert.is(ok(t.as("alice", ["heartbeat", "--json"])).json.unjudged, 1);
  assert.equal(undeclaredEdits(t), [], "a path not judged is not recorded");
});

test.run();
