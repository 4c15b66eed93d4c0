import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp } from "./support/repo.ts";
import { storeClaim, storeTasks } from "./support/seed.ts";
import { commitFile, later, MIN, team } from "./support/team.ts";

test.after(cleanupTemp);

test("status is the bird's-eye view: roster, claim matrix, worktrees, blocked edges, review, inboxes, leases, conflicts", async () => {
  const t = team(["alice", "bob", "carol"]);
  for (const a of ["alice", "bob", "carol"]) assert.is(t.as(a, ["session", "start", "--objective", `${a}'s part`, "--session", `sess-${a}`]).code, 0);
  const lead = (args: string[], env?: NodeJS.ProcessEnv) => t.as("lead", args, env);
  // The tasks and the claims: written in-process (support/seed.ts).
  await storeTasks({ cwd: t.repo, agent: "lead" }, [
    { id: "api", objective: "change the endpoint" },
    { id: "tests", objective: "test the endpoint", after: ["api"] },
    { id: "lint", objective: "lint config" },
    { id: "docs", objective: "docs" },
  ]);
  await storeClaim({ cwd: t.wt.alice!, agent: "alice" }, "api", { ttl: "2m" });
  assert.is(t.as("alice", ["handoff", "api", "--to", "bob", "--contract", "GET /x"]).code, 0);
  await storeClaim({ cwd: t.wt.carol!, agent: "carol" }, "lint");
  commitFile(t.wt.alice!, "shared.txt", "alice\n");
  commitFile(t.wt.carol!, "shared.txt", "carol\n");
  assert.is(t.as("carol", ["done", "lint", "--verify", "true"]).code, 0);

  const s = lead(["status", "--json"]);
  assert.is(s.code, 0, s.stderr);
  const v = s.json;
  assert.equal(v.roster.agents.map((a: any) => [a.agent, a.status, a.claimed]), [["alice", "active", ["api"]], ["bob", "active", []], ["carol", "active", []]]);
  assert.equal(v.matrix.agents, ["alice", "bob", "carol"]);
  const row = (id: string) => v.matrix.rows.find((r: any) => r.task === id);
  assert.equal(row("api").cells, ["holds", null, null]);
  assert.equal(row("lint").cells, [null, null, "submitted"]);
  assert.equal(row("docs").cells, [null, null, null]);
  assert.equal(v.placements.map((p: any) => [p.worktree, p.branch, p.session, p.agent]), [
    [t.wt.alice, "alice-work", "sess-alice", "alice"],
    [t.wt.bob, "bob-work", "sess-bob", "bob"],
    [t.wt.carol, "carol-work", "sess-carol", "carol"],
  ]);
  assert.equal(v.blocked.map((e: any) => [e.task, e.waits_on, e.status, e.holder]), [["tests", "api", "claimed", "alice"]]);
  assert.equal(v.review.map((r: any) => [r.task, r.submitted_by, r.verification.passed]), [["lint", "carol", true]]);
  assert.equal(v.inbox, [{ agent: "bob", waiting: 1 }]);
  assert.equal(v.expiring_soon.map((h: any) => h.task), ["api"]);
  assert.is(v.predicted_conflicts.conflicting, 1);
  assert.equal(v.conflicts, [], "conflicts stays the list of sync conflicts");
  assert.equal(v.predicted_conflicts.pairs.map((p: any) => [p.a.branch, p.b.branch, p.conflicts]), [["alice-work", "carol-work", ["shared.txt"]]]);
  assert.is(v.counts.review, 1);

  const text = lead(["status"]).stdout;
  assert.not.match(text, /\x1b\[/, "no colour when stdout is not a TTY");
  for (const re of [
    /^agents$/m,
    /^\s+alice\s+active\s+1\/1/m,
    /^\s+task\s+alice\s+bob\s+carol$/m,
    /^\s+api\s+H\s+\.\s+\.\s+claimed/m,
    /^\s+lint\s+\.\s+\.\s+R\s+review/m,
    /sess-bob\s+bob \(active/,
    /^\s+tests waits on api \(claimed by alice until/m,
    /^\s+lint\s+by carol\s+passed/m,
    /^inbox\s+bob 1$/m,
    /^expiring soon$/m,
    /^conflicts: 1 conflict predicted: alice-work \(alice\) x carol-work \(carol\) on shared.txt$/m,
  ]) assert.match(text, re);

  const later3 = lead(["status", "--json", "--no-conflicts"], { HANDOFF_NOW: later(3 * MIN) });
  assert.is(later3.code, 0, later3.stderr);
  assert.is(later3.json.predicted_conflicts, null);
  assert.equal(later3.json.expired.map((h: any) => h.task), ["api"]);
  assert.equal(later3.json.blocked.map((e: any) => [e.waits_on, e.status]), [["api", "todo"]], "an expired lease is shown as free");
});

test.run();
