import { writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, handoffRefs } from "./support/repo.ts";
import { commitFile, team, type Team } from "./support/team.ts";
import { storeClaim, storeTasks, type Actor } from "./support/seed.ts";

test.after(cleanupTemp);

/** Where `t.as(agent, ...)` runs: the agent's worktree, else the main one. */
const actor = (t: Team, agent: string): Actor => ({ cwd: t.wt[agent] ?? t.repo, agent });

test("done runs the task's verify command in the agent's worktree: passed -> review -> accept -> done, dependents ready", async () => {
  const t = team(["alice", "bob"]);
  // `test -f api.ts` passes only in alice's worktree, where the file was committed.
  await storeTasks(actor(t, "lead"), [{ id: "api", objective: "api", verify: "test -f api.ts && echo all 3 tests passed" }, { id: "tests", objective: "tests", after: ["api"] }]);
  await storeClaim(actor(t, "alice"), "api");
  const commit = commitFile(t.wt.alice!, "api.ts", "a\nb\n");

  const d = t.as("alice", ["done", "api", "--json"]);
  assert.is(d.code, 0, d.stderr);
  assert.is(d.json.status, "review");
  assert.is(d.json.claim, null);
  const v = d.json.review.verification;
  assert.equal([v.exit_code, v.passed, v.timed_out, v.cwd], [0, true, false, t.wt.alice]);
  assert.match(v.output_tail, /all 3 tests passed/);
  assert.is(v.uncommitted, undefined, "a clean worktree");
  assert.equal([d.json.review.diff.files, d.json.review.diff.insertions, d.json.review.commit], [1, 2, commit]);

  const q = t.as("lead", ["review", "--json"]);
  assert.equal(q.json.map((i: any) => [i.task, i.submitted_by, i.verification.passed, i.diff.files]), [["api", "alice", true, 1]]);
  assert.match(t.as("lead", ["review"]).stdout, /api\s+submitted by alice[\s\S]*1 file changed, \+2 -0[\s\S]*\| all 3 tests passed/);
  assert.equal(t.as("lead", ["ready", "--json"]).json, [], "a task in review does not unblock its dependents");
  const claimReview = t.as("bob", ["claim", "api"]);
  assert.is(claimReview.code, 3);
  assert.match(claimReview.stderr, /api is in review/);

  const a = t.as("lead", ["review", "accept", "api", "--reason", "looks good", "--json"]);
  assert.is(a.code, 0, a.stderr);
  assert.is(a.json.status, "done");
  assert.equal([a.json.review.decision.verdict, a.json.review.decision.by], ["accepted", "lead"]);
  assert.equal(t.as("lead", ["ready", "--json"]).json.map((x: any) => x.id), ["tests"]);
  assert.equal(t.as("lead", ["review", "--json"]).json, []);
  const types = t.as("lead", ["events", "--task", "api", "--json"]).json.map((e: any) => e.type);
  assert.equal(types, ["created", "claimed", "submitted", "accepted"]);
});

test("a failing verification is recorded, exits 3 and leaves the task with its agent; reject sends reviewed work back with the reason", async () => {
  const t = team(["alice"]);
  await storeTasks(actor(t, "lead"), [{ id: "parser", objective: "parser" }]);
  await storeClaim(actor(t, "alice"), "parser");
  const f = t.as("alice", ["done", "parser", "--verify", "echo 2 failing; exit 7", "--json"]);
  assert.is(f.code, 3, f.stderr);
  assert.is(f.json.error.code, "verification_failed");
  assert.is(f.json.error.data.verification.exit_code, 7);
  assert.match(f.stderr, /verification of parser failed \(exit 7\).*stays with alice/);
  const shown = t.as("lead", ["task", "show", "parser", "--json"]).json;
  assert.equal([shown.status, shown.claim.agent, shown.review.verification.passed], ["claimed", "alice", false]);
  assert.match(shown.review.verification.output_tail, /2 failing/);
  assert.equal(t.as("lead", ["review", "--json"]).json, []);
  const ev = t.as("lead", ["events", "--task", "parser", "--type", "verified", "--json"]).json;
  assert.equal(ev.map((e: any) => [e.passed, e.exit_code]), [[false, 7]]);

  writeFileSync(`${t.wt.alice}/scratch.txt`, "not committed\n");
  const ok = t.as("alice", ["done", "parser", "--verify", "true", "--json"]);
  assert.is(ok.code, 0, ok.stderr);
  assert.is(ok.json.review.verification.uncommitted, 1, "the reviewer learns that uncommitted changes were tested");
  assert.match(t.as("lead", ["review"]).stdout, /1 uncommitted change in the worktree was tested too/);
  const r = t.as("lead", ["review", "reject", "parser", "--reason", "needs error messages", "--json"]);
  assert.is(r.code, 0, r.stderr);
  assert.equal([r.json.status, r.json.claim, r.json.result.reason, r.json.review.decision.verdict], ["todo", null, "needs error messages", "rejected"]);
  assert.match(t.as("lead", ["task", "show", "parser"]).stdout, /rejected by lead[\s\S]*reason: needs error messages/);
  assert.is(t.as("alice", ["claim", "parser"]).code, 0, "rejected work can be taken again");
});

test("verification is bounded: a long output keeps its tail and says how much it dropped; a slow command is killed", async () => {
  const t = team(["alice"]);
  await storeTasks(actor(t, "lead"), [{ id: "loud", objective: "loud" }, { id: "slow", objective: "slow" }]);
  await storeClaim(actor(t, "alice"), "loud");
  const loud = t.as("alice", ["done", "loud", "--verify", "yes 0123456789 | head -n 20000; echo THE-END", "--json"]);
  assert.is(loud.code, 0, loud.stderr);
  const v = loud.json.review.verification;
  assert.ok(v.output_tail.length <= 4200, `tail is ${v.output_tail.length} characters`);
  assert.match(v.output_tail, /^\[… \d+ earlier bytes of output not kept\]/);
  assert.match(v.output_tail, /THE-END\n$/);
  assert.is(v.truncated_bytes + Buffer.byteLength(v.output_tail.split("\n").slice(1).join("\n")), 220_008);

  writeFileSync(`${t.wt.alice}/.handoff.yaml`, "verify_timeout: 1s\n");
  await storeClaim(actor(t, "alice"), "slow");
  const started = Date.now();
  const slow = t.as("alice", ["done", "slow", "--verify", "sleep 30; echo never", "--json"]);
  assert.is(slow.code, 3, slow.stderr);
  assert.ok(Date.now() - started < 20_000, "killed at the deadline, not after 30s");
  assert.is(slow.json.error.data.verification.timed_out, true);
  assert.match(slow.stderr, /timed out/);
});

test("bad input and wrong states: no ref changed", async () => {
  const t = team(["alice"]);
  await storeTasks(actor(t, "lead"), [{ id: "x", objective: "x" }, { id: "y", objective: "y" }]);
  await storeClaim(actor(t, "alice"), "y");
  assert.is(t.as("alice", ["done", "y", "--verify", "true"]).code, 0);
  const before = handoffRefs(t.repo);
  const cases: [string[], number, RegExp][] = [
    [["review", "accept", "x"], 3, /cannot accept task x: it is todo, not in review/],
    [["review", "reject", "nope"], 4, /no task nope/],
    [["done", "x", "--verify"], 2, /has no verify command/],
    [["done", "x", "--verify", "   "], 2, /--verify needs a command/],
    [["done", "y", "--no-verify"], 3, /y is in review/],
    [["done", "y", "--verify", "true"], 3, /y is in review/],
    [["task", "add", "z", "--verify", "a".repeat(3000)], 2, /verify command is 3000 characters/],
    [["review", "accept", "y", "--reason", "r".repeat(9000)], 2, /reason is 9000 characters/],
  ];
  for (const [args, code, re] of cases) {
    const r = t.as("alice", args);
    assert.is(r.code, code, `${args.join(" ").slice(0, 60)}: ${r.stderr}`);
    assert.match(r.stderr, re);
  }
  assert.is(handoffRefs(t.repo), before);
});

test.run();
