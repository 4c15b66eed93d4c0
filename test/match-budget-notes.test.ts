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
import { inProcess, type McpHandle } from "./support/mcp.ts";
import { cleanupTemp, cli, type CliResult } from "./support/repo.ts";
import { team, type Team } from "./support/team.ts";

const open: McpHandle[] = [];
test.after(async () => {
  for (const h of open.splice(0)) await h.close();
  cleanupTemp();
});

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

test("status and heartbeat (CLI and MCP): a changed path not judged against a costly declaration within the budget is counted and said, never drift", async () => {
  const t = team(["alice"]);
  // 140 declared globs a fresh process compiles at ~16,600 units each: past a drift check's 2,000,000.
  ok(t.as("alice", ["session", "start", "--objective", "costly", ...costlyGlobs(0, 100).flatMap((g) => ["--files", g])]));
  ok(t.as("alice", ["lease", ...costlyGlobs(100, 40)]));
  writeFileSync(join(t.wt.alice!, "notes.txt"), "changed\n");

  const status = ok(t.as("lead", ["status", "--json", "--no-conflicts"])).json;
  assert.equal(status.drift.agents.map((a: { agent: string; undeclared: string[]; count: number; unjudged: number }) => [a.agent, a.undeclared, a.count, a.unjudged]), [["alice", [], 0, 1]]);
  const text = ok(t.as("lead", ["status", "--no-conflicts"])).stdout;
  // Nothing of alice's was found outside her declaration: the section is not headed "undeclared".
  assert.match(text, /\nnot judged \(changed paths the budget left unchecked against a declaration\)\n {2}alice {2}could not tell whether 1 path it changed is outside what alice declared: its declared globs took more than the budget of matching a drift check may do \(2,000,000 units\), so some were not looked at; not counted\n/);

  const beat = ok(t.as("alice", ["heartbeat"]));
  assert.match(beat.stdout, /^heartbeat alice at \S+\nnote: could not tell whether 1 path changed in this worktree is outside what you declared: your declared globs took more than the budget of matching a drift check may do \(2,000,000 units\), so some were not looked at; not recorded as drift\n$/);
  assert.is(ok(t.as("alice", ["heartbeat", "--json"])).json.unjudged, 1);
  // The SessionStart hook's heartbeat: the same note in the context the agent starts with.
  const start = ok(cli(["hook", "claude-session-start"], { cwd: t.wt.alice!, agent: "alice", input: JSON.stringify({ session_id: "s-alice", cwd: t.wt.alice!, hook_event_name: "SessionStart" }) }), "session hook");
  assert.match(JSON.parse(start.stdout).hookSpecificOutput.additionalContext, /\nnote: could not tell whether 1 path changed in this worktree is outside what you declared: .*; not recorded as drift$/);
  // MCP's heartbeat, load_context: the same note (this test process compiled none of these globs yet).
  const mcp = await inProcess(t.wt.alice!, { agent: "alice" });
  open.push(mcp);
  const r = await mcp.call("load_context");
  assert.not.ok(r.isError);
  assert.match((r.content as { text: string }[]).map((c) => c.text).join("\n"), /\nnote: could not tell whether 1 path changed in this worktree is outside what you declared: .*; not recorded as drift\n/);
  assert.is((r.structuredContent as { session: { unjudged: number } }).session.unjudged, 1);
  assert.equal(undeclaredEdits(t), [], "a path not judged is not recorded");
});

test("the edit hook, end to end: a path it cannot judge against the agent's costly leases within its budget gets the could-not-tell line, not a drift notice, and nothing is recorded", () => {
  const t = team(["alice"]);
  // Sixty: the hook's own-lease check compiles the first of them (and keeps them compiled), the
  // drift notice's budget of 250,000 units is spent on the rest.
  ok(t.as("alice", ["lease", ...costlyGlobs(400, 60)], at(0)));
  const r = edit(t, "alice", "src/x/a.ts", at(60_000));
  const context = r.json.hookSpecificOutput.additionalContext as string;
  assert.match(context, /git-handoff notice: could not tell whether src\/x\/a\.ts is outside what you declared: your declared globs took more than the budget of matching one check may do \(250,000 units\), so some were not looked at; not recorded/);
  assert.not.match(context, /not blocked, recorded/, "no drift notice");
  assert.equal(undeclaredEdits(t), []);
});

test("lease, end to end: a due claim whose costly scope leases it cannot look at within a grant's budget is not extended, and the warning says how to extend it", () => {
  const t = team(["alice"]);
  ok(t.as("lead", ["task", "add", "costly work", "--id", "w", ...costlyGlobs(600, 100).flatMap((g) => ["--scope", g])], at(0)));
  ok(t.as("alice", ["claim", "w"], at(0)));
  ok(t.as("alice", ["lease", "--task", "w", ...costlyGlobs(700, 40)], at(0)));
  const expiry = () => ok(t.as("lead", ["task", "show", "w", "--json"], at(0))).json.claim.expires_at as string;
  const before = expiry();
  // Twenty minutes in, past the third of its thirty: a lease its leases may cover would extend it.
  const r = ok(t.as("alice", ["lease", "src/x/a.ts"], at(20 * 60_000)));
  assert.match(r.stdout, /^leased src\/x\/a\.ts /);
  assert.match(r.stderr, /git-handoff: warning: did not extend your claim on w: its leases' globs took more than the budget of matching a grant may do \(2,000,000 units\), so some were not looked at; extend it with git handoff renew w\n/);
  assert.is(expiry(), before, "not extended blindly");
  const json = ok(t.as("alice", ["lease", "src/x/b.ts", "--json"], at(20 * 60_000))).json;
  assert.equal(json.not_extended.tasks, ["w"]);
});

test("an ignore glob in .gitattributes past a lease pattern's bounds is left out with a warning, as one in .handoff.yaml is", () => {
  const t = team(["alice"]);
  const huge = `${"{a,b}".repeat(10)}*s*s.ts`;
  writeFileSync(join(t.wt.alice!, ".gitattributes"), `${huge} linguist-generated\n*.gen.ts linguist-generated\n`);
  const r = ok(t.as("alice", ["lease", "src/a.gen.ts", "src/b.ts"]));
  assert.match(r.stderr, /git-handoff: warning: \.gitattributes: ignore glob "\{a,b\}.*" left out: it expands to more than 64 paths/);
  assert.match(r.stdout, /not leased \(ignored by policy\): src\/a\.gen\.ts/, "the globs within the bounds still count");
  assert.is(r.stderr.split("\n").filter((l) => l.includes(".gitattributes")).length, 1, "said once");
  writeFileSync(join(t.wt.alice!, ".handoff.yaml"), `ignore:\n  - "${huge}"\n`);
  assert.match(ok(t.as("alice", ["lease", "src/c.ts"])).stderr, /git-handoff: warning: \.handoff\.yaml: ignore glob "\{a,b\}.*" left out: it expands to more than 64 paths/);
});

test.run();
