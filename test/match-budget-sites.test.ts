// The glob matching left without a budget by the last session: an ask, claim extension after a
// lease or an edit, the session loop's plan, the drift notice and the policy's ignore globs. Each
// met a lease set (or task scopes, or .handoff.yaml) of legal but costly globs with seconds to
// minutes of matching (docs/performance.md, fortieth session). Each now stops at a budget
// (core/match-budget.ts) and gives the safe answer, naming the budget: what it could not look at
// is never taken as free, covered, apart or ignored.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isDeclared, declarationOf, undeclaredPaths, unjudgedNotice } from "../src/core/declaration.ts";
import type { Lease } from "../src/core/lease.ts";
import { buildPolicy, isIgnored } from "../src/core/lease-policy.ts";
import { planLoop } from "../src/core/loop-plan.ts";
import { matchesPath } from "../src/core/glob-overlap.ts";
import { newMatchBudget, SPENT } from "../src/core/match-budget.ts";
import { dueTaskIds, unextendedNote } from "../src/core/task-leases.ts";
import type { Task } from "../src/core/task.ts";
import { parseConfigData } from "../src/store/config-file.ts";
import { costly, costlyApart } from "./support/costly-globs.ts";
import { cleanupTemp, cli } from "./support/repo.ts";
import { team } from "./support/team.ts";

test.after(cleanupTemp);

const now = new Date("2026-12-01T00:00:00Z");

function lease(pattern: string, agent: string, task: string | null = null, leftMs = 3_600_000): Lease {
  return {
    pattern, agent, task, exclusive: false, acquired_at: now.toISOString(), expires_at: new Date(now.getTime() + leftMs).toISOString(),
    ttl_ms: 3_600_000, reason: null, worktree: null, branch: null, scope: "worktree",
  };
}

function todo(id: string, scope: string[]): Task {
  const at = now.toISOString();
  return { id, objective: id, status: "todo", priority: 0, scope, claim: null, attempts: 0, max_attempts: 3, fence: 0, created_by: "lead", created_at: at, updated_at: at, result: null };
}

test("ask --release: asks for the leases it found, names those it could not compare; finding none but leaving some is too_costly, not not_found", () => {
  const t = team(["mallory", "bob"]);
  assert.is(t.as("mallory", ["lease", "src/a.ts", ...Array.from({ length: 24 }, (_, i) => costly(i))]).code, 0);
  const r = t.as("bob", ["ask", "mallory", "--release", "src/a.ts", "--json"]);
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.json.paths, ["src/a.ts"]);
  assert.ok(r.json.not_compared.count > 0, JSON.stringify(r.json));
  assert.match(r.json.not_compared.note, /of mallory's leases were not compared with "src\/a.ts": their globs took more than the budget of matching one check may do \(250,000 units\), so they are not asked for: "\*\*\/\{a,b\}/);
  const text = t.as("bob", ["ask", "mallory", "--release", "src/a.ts"]);
  assert.match(text.stdout, /\nnote: \d+ of mallory's leases were not compared/);
  // A path none of the compared leases names: it cannot say mallory holds nothing of it.
  const none = t.as("bob", ["ask", "mallory", "--release", "src/core/paths.ts", "--json"]);
  assert.is(none.code, 3, none.stdout + none.stderr);
  assert.match(none.stderr, /\[too_costly\]/);
  assert.match(none.stderr, /could not compare \d+ of mallory's live leases with "src\/core\/paths.ts" within the budget of glob matching one check may do \(250,000 units\)/);
});

test("claim extension: a due claim whose leases were not looked at within the budget is left, and named; one found is extended", () => {
  const leases = [...Array.from({ length: 40 }, (_, i) => lease(costly(3000 + i), "me", `t${i}`, 600_000)), lease("src/a.ts", "me", "plain", 600_000)];
  const work = newMatchBudget();
  const due = dueTaskIds(leases, "me", now, (l) => matchesPath(l.pattern, "src/a.ts", work));
  assert.equal(due.ids, ["plain"]);
  assert.ok(due.unchecked.length > 0 && due.unchecked.every((id) => id.startsWith("t")), JSON.stringify(due));
  assert.match(unextendedNote(due.unchecked, 250_000, "one check"), /^did not extend your claim on t\d+, .*: its leases' globs took more than the budget of matching one check may do \(250,000 units\), so some were not looked at; extend it with git handoff renew t\d+$/);
});

test("loop plan: task scopes not compared within the budget are planned as one unit, saying so; ordinary scopes stay exact", () => {
  const plan = planLoop(["c1", "c2", "c3", "c4"].map((id, i) => todo(id, [costlyApart(i)])), now, { maxWorktrees: 4 });
  assert.is(plan.units.length, 1, JSON.stringify(plan.units));
  assert.equal([...plan.units[0]!.tasks].sort(), ["c1", "c2", "c3", "c4"]);
  assert.match(plan.not_compared!.note, /took more than the budget of matching a plan may do \(2,000,000 units\) to compare, so they are planned as overlapping: in one unit, never side by side/);
  const exact = planLoop([todo("a", ["src/a/**"]), todo("b", ["src/b/**"]), todo("ax", ["src/a/x.ts"]), todo("m", ["docs/**/*.md"])], now, { maxWorktrees: 4 });
  assert.equal(exact.units.map((u) => u.tasks), [["a", "ax"], ["b"], ["m"]]);
  assert.is(exact.not_compared, undefined);
});

test("drift: a path not judged against the declaration within the budget is never called undeclared", () => {
  const d = declarationOf("me", null, [], [lease("docs/x.md", "me"), ...Array.from({ length: 300 }, (_, i) => lease(costly(3100 + i), "me"))], now)!;
  assert.is(isDeclared(d, "src/core/paths.ts"), SPENT);
  assert.is(isDeclared(d, "docs/x.md"), true);
  assert.equal(undeclaredPaths(d, ["src/core/paths.ts", "docs/x.md"]), []);
  assert.match(unjudgedNotice(["src/core/paths.ts"]), /could not tell whether src\/core\/paths.ts is outside what you declared: your declared globs took more than the budget of matching one check may do \(250,000 units\).*not recorded$/);
});

test("policy: an ignore glob past a lease pattern's bounds is left out with a warning; past the budget a path is not ignored", async () => {
  const huge = `${"{a,b}".repeat(10)}*s*s.ts`;
  const warnings: string[] = [];
  await parseConfigData(`ignore:\n  - "${huge}"\n  - "*.gen.ts"\n`, warnings);
  assert.match(warnings.join("\n"), /ignore glob "\{a,b\}.*" left out: it expands to more than 64 paths/);
  const policy = buildPolicy({ mode: "balanced", ignore: [huge, "*.gen.ts"] }, null);
  assert.not.ok(policy.ignore.some((g) => g.includes("{a,b}")));
  assert.is(isIgnored(policy, "src/a.gen.ts"), true);
  // A hundred costly globs (none compiled before in this process) before the one that names the
  // path: past the budget it is checked as any other.
  const costlyPolicy = buildPolicy({ mode: "balanced", ignore: [...Array.from({ length: 100 }, (_, i) => costly(1000 + i)), "*.gen.ts"] }, null);
  assert.is(isIgnored(costlyPolicy, "src/a.gen.ts"), false);
});

test("the edit hook, end to end: a due claim whose scope leases it cannot look at within its budget is not extended, and the hook says how to extend it", () => {
  const T0 = Date.parse("2026-06-01T10:00:00.000Z");
  const at = (ms: number) => ({ HANDOFF_NOW: new Date(T0 + ms).toISOString() });
  const t = team(["alice"]);
  const scope = Array.from({ length: 24 }, (_, i) => ["--scope", costly(200 + i)]).flat();
  assert.is(t.as("lead", ["task", "add", "costly work", "--id", "w", ...scope], at(0)).code, 0);
  assert.is(t.as("alice", ["claim", "w"], at(0)).code, 0);
  const expiry = () => t.as("lead", ["task", "show", "w", "--json"], at(0)).json.claim.expires_at as string;
  const before = expiry();
  const payload = JSON.stringify({ session_id: "s1", cwd: t.wt.alice, hook_event_name: "PreToolUse", tool_name: "Edit", tool_input: { file_path: `${t.wt.alice}/src/x/a.ts`, old_string: "a", new_string: "b" } });
  // Twenty minutes in, past the third of its thirty: an edit that its leases may cover would extend it.
  const r = cli(["hook", "claude-pre-tool-use"], { cwd: t.wt.alice!, agent: "alice", input: payload, env: at(20 * 60_000) });
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /did not extend your claim on w: its leases' globs took more than the budget of matching one check may do \(250,000 units\)/);
  assert.match(r.stdout, /git handoff renew w/);
  assert.is(expiry(), before, "not extended blindly");
});

test.run();
