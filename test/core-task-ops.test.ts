// The pure task state machine, with a fixed clock: no git, no processes.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Actor } from "../src/core/identity.ts";
import type { Outcome } from "../src/core/outcome.ts";
import { buildOverview } from "../src/core/overview.ts";
import { Task } from "../src/core/task.ts";
import {
  cancelTask,
  claimCandidates,
  claimTask,
  completeTask,
  createTask,
  failTask,
  reclaimTask,
  releaseTask,
  renewTask,
  settle,
  type OpContext,
} from "../src/core/task-ops.ts";
import { parseDuration, parseSince } from "../src/core/duration.ts";
import { submitForReview } from "../src/core/review.ts";
import { recordHandoff } from "../src/core/handoff.ts";
import { newTaskId, refComponentProblem } from "../src/core/ids.ts";

const T0 = Date.parse("2026-11-29T10:00:00.000Z");
const MIN = 60_000;
const actor = (agent: string): Actor => ({ agent, worktree: "/w", branch: "main", scope: "primary" });
const ctx = (agent: string, ms = 0): OpContext => ({ actor: actor(agent), now: new Date(T0 + ms) });

function ok(out: Outcome<Task>): { record: Task; types: string[] } {
  if (!out.ok) throw new Error(`refused: ${out.refusal.message}`);
  assert.ok(Task.safeParse(out.record).success, "the record fits the schema");
  for (const s of out.steps) assert.ok(Task.safeParse(s.record).success);
  return { record: out.record, types: out.steps.map((s) => s.event.type) };
}

function refused(out: Outcome<Task>, code: string): Record<string, unknown> {
  assert.not.ok(out.ok, "expected a refusal");
  if (out.ok) throw new Error("unreachable");
  assert.is(out.refusal.code, code, out.refusal.message);
  return { ...out.refusal, ...out.refusal.data };
}

function fresh(maxAttempts = 3, id = "t1", priority = 0, ms = 0): Task {
  return ok(createTask({ id, objective: "  do it  ", priority, scope: ["src/**"], maxAttempts }, ctx("lead", ms))).record;
}

test("createTask: todo, trimmed objective, one created event; empty or oversized objective refused", () => {
  const out = createTask({ id: "t1", objective: "  do it  ", priority: 2, scope: [], maxAttempts: 3 }, ctx("lead"));
  const { record, types } = ok(out);
  assert.equal([record.status, record.objective, record.claim, record.attempts, record.fence], ["todo", "do it", null, 0, 0]);
  assert.equal(types, ["created"]);
  assert.is(record.created_at, new Date(T0).toISOString());
  refused(createTask({ id: "x", objective: " \n ", priority: 0, scope: [], maxAttempts: 3 }, ctx("lead")), "invalid_input");
  refused(createTask({ id: "x", objective: "o".repeat(4001), priority: 0, scope: [], maxAttempts: 3 }, ctx("lead")), "invalid_input");
  refused(createTask({ id: "x", objective: "o", priority: 0, scope: Array(101).fill("a"), maxAttempts: 3 }, ctx("lead")), "invalid_input");
});

test("claim grants with a lease and fence; another agent is refused with holder, expiry and suggestions", () => {
  const { record: c, types } = ok(claimTask(fresh(), ctx("alice", MIN), 10 * MIN));
  assert.equal(types, ["claimed"]);
  assert.equal([c.status, c.claim?.agent, c.claim?.fence, c.fence], ["claimed", "alice", 1, 1]);
  assert.is(c.claim?.expires_at, new Date(T0 + 11 * MIN).toISOString());
  const r = refused(claimTask(c, ctx("bob", 2 * MIN), MIN), "held_by_other");
  assert.equal([r.holder, r.task, r.expires_at], ["alice", "t1", c.claim?.expires_at]);
  assert.match(String(r.message), /held by alice in \/w \(main\) until .* \(in 9m\)/);
  assert.equal((r.suggestions as { action: string }[]).map((s) => s.action), ["wait", "negotiate", "work_elsewhere"]);
  // the holder claiming again renews: same fence, new expiry
  const { record: again, types: t2 } = ok(claimTask(c, ctx("alice", 5 * MIN), 10 * MIN));
  assert.equal(t2, ["renewed"]);
  assert.equal([again.claim?.fence, again.claim?.expires_at], [1, new Date(T0 + 15 * MIN).toISOString()]);
});

test("renew keeps the claim's ttl unless given one; release frees; fences only go up", () => {
  const c = ok(claimTask(fresh(), ctx("alice"), 10 * MIN)).record;
  const r = ok(renewTask(c, ctx("alice", 3 * MIN))).record;
  assert.is(r.claim?.expires_at, new Date(T0 + 13 * MIN).toISOString());
  const r2 = ok(renewTask(r, ctx("alice", 4 * MIN), MIN)).record;
  assert.equal([r2.claim?.expires_at, r2.claim?.ttl_ms], [new Date(T0 + 5 * MIN).toISOString(), MIN]);
  refused(renewTask(r2, ctx("bob", 4 * MIN)), "held_by_other");
  const rel = ok(releaseTask(r2, ctx("alice", 4 * MIN)));
  assert.equal(rel.types, ["released"]);
  assert.equal([rel.record.status, rel.record.claim, rel.record.fence, rel.record.attempts], ["todo", null, 1, 0]);
  refused(releaseTask(rel.record, ctx("alice", 4 * MIN)), "not_holder");
  refused(renewTask(rel.record, ctx("alice", 4 * MIN)), "not_holder");
  assert.is(ok(claimTask(rel.record, ctx("bob", 5 * MIN), MIN)).record.claim?.fence, 2);
});

test("done, fail and cancel are final; the holder or (when unclaimed) anyone may finish", () => {
  const c = ok(claimTask(fresh(), ctx("alice"), 10 * MIN)).record;
  refused(completeTask(c, ctx("bob"), {}), "held_by_other");
  const d = ok(completeTask(c, ctx("alice", MIN), { commit: "a".repeat(40), note: "n" }));
  assert.equal([d.record.status, d.record.claim, d.record.result], ["done", null, { commit: "a".repeat(40), note: "n" }]);
  for (const op of [
    (t: Task) => claimTask(t, ctx("bob"), MIN),
    (t: Task) => completeTask(t, ctx("alice"), {}),
    (t: Task) => failTask(t, ctx("alice"), "x"),
    (t: Task) => cancelTask(t, ctx("alice"), "x"),
    (t: Task) => reclaimTask(t, ctx("alice"), "x"),
    (t: Task) => releaseTask(t, ctx("alice")),
  ]) {
    refused(op(d.record), "final_state");
  }
  assert.is(ok(failTask(fresh(), ctx("lead"), "cannot")).record.status, "failed");
  assert.is(ok(cancelTask(fresh(), ctx("lead"), "obsolete")).record.status, "cancelled");
  refused(failTask(fresh(), ctx("lead"), " "), "invalid_input");
  refused(completeTask(fresh(), ctx("lead"), { note: "n".repeat(8001) }), "invalid_input");
});

test("inside the takeover grace another agent can neither finish, submit for review nor hand over the holder's task", () => {
  const c = ok(claimTask(fresh(), ctx("alice"), 10 * MIN)).record;
  // 30 s past alice's expiry by this clock, inside a 60 s grace (max_clock_skew plus the offset).
  const bob: OpContext = { ...ctx("bob", 10 * MIN + 30_000), takeoverGraceMs: 60_000 };
  const verification = { command: "true", cwd: "/w", exit_code: 0, signal: null, timed_out: false, passed: true, duration_ms: 1, output_tail: "", truncated_bytes: 0, at: bob.now.toISOString() };
  refused(completeTask(c, bob, {}), "held_by_other");
  const r = refused(submitForReview(c, bob, { verification, commit: null, diff: null }), "held_by_other");
  assert.equal([r.holder, r.takeover_grace_ms], ["alice", 60_000]);
  // Nor hand it over: a handoff goes to the holder's task from the holder, or from anyone while nobody holds it.
  const note = { to: null, commit: null, diff: null, contract: "the API", verify: null, questions: [], note: null };
  assert.equal(refused(recordHandoff(c, note, bob), "held_by_other").holder, "alice");
  // Past the grace all three go through, the expiry recorded first.
  const late: OpContext = { ...bob, now: new Date(T0 + 11 * MIN + 1) };
  assert.equal(ok(submitForReview(c, late, { verification, commit: null, diff: null })).types, ["expired", "submitted"]);
  assert.equal(ok(recordHandoff(c, note, late)).types, ["expired", "handoff"]);
});

test("settle: an expired claim is free (attempts + 1); the last allowed expiry fails the task", () => {
  let t = fresh(2);
  t = ok(claimTask(t, ctx("a1"), MIN)).record;
  assert.equal(settle(t, ctx("x", MIN - 1)).steps, [], "not expired one ms before");
  const s1 = settle(t, ctx("x", MIN));
  assert.equal(s1.steps.map((s) => s.event.type), ["expired"]);
  assert.equal([s1.record.status, s1.record.claim, s1.record.attempts], ["todo", null, 1]);
  assert.equal([s1.steps[0]!.event.agent, s1.steps[0]!.event.by], ["a1", "x"]);
  // takeover: expired then claimed, in one outcome
  const take = ok(claimTask(t, ctx("a2", 2 * MIN), MIN));
  assert.equal(take.types, ["expired", "claimed"]);
  assert.equal([take.record.attempts, take.record.claim?.fence], [1, 2]);
  // second expiry with max_attempts 2: failed, and claiming is refused
  const s2 = settle(take.record, ctx("x", 4 * MIN));
  assert.equal(s2.steps.map((s) => s.event.type), ["expired", "failed"]);
  assert.equal([s2.record.status, s2.record.attempts], ["failed", 2]);
  assert.match(s2.record.result?.reason ?? "", /lease expired 2 times without completion \(max_attempts 2\)/);
  refused(claimTask(take.record, ctx("a3", 4 * MIN), MIN), "final_state");
  // the holder's own late renew is refused: the lease is gone
  refused(renewTask(take.record, ctx("a2", 4 * MIN)), "final_state");
  const t3 = ok(claimTask(fresh(3), ctx("a1"), MIN)).record;
  refused(renewTask(t3, ctx("a1", 2 * MIN)), "not_holder");
});

test("reclaim force-releases a live claim, naming the previous holder; unclaimed tasks have nothing to reclaim", () => {
  const c = ok(claimTask(fresh(), ctx("alice"), 60 * MIN)).record;
  const r = ok(reclaimTask(c, ctx("bob", MIN), "gone"));
  assert.equal(r.types, ["reclaimed"]);
  assert.equal([r.record.status, r.record.claim, r.record.attempts], ["todo", null, 0]);
  const out = reclaimTask(c, ctx("bob", MIN), "gone");
  if (!out.ok) throw new Error("refused");
  assert.equal([out.steps[0]!.event.holder, out.steps[0]!.event.agent, out.steps[0]!.event.reason], ["alice", "bob", "gone"]);
  refused(reclaimTask(fresh(), ctx("bob"), "x"), "not_holder");
  refused(reclaimTask(c, ctx("bob"), ""), "invalid_input");
});

test("the agent a reclaim took a task from may not finish it until it claims it again; others and later grants may", () => {
  const c = ok(claimTask(fresh(), ctx("alice"), 60 * MIN)).record;
  const r = ok(reclaimTask(c, ctx("bob", MIN), "stuck")).record;
  assert.equal(r.reclaimed, { agent: "alice", fence: 1, by: "bob", at: new Date(T0 + MIN).toISOString() });
  const late = refused(completeTask(r, ctx("alice", 2 * MIN), { note: "late" }), "not_holder");
  assert.match(String(late.message), /bob reclaimed it from alice \(fence 1\)/);
  refused(failTask(r, ctx("alice", 2 * MIN), "x"), "not_holder");
  refused(cancelTask(r, ctx("alice", 2 * MIN), "x"), "not_holder");
  // the creator may still cancel it, and anyone else may finish it while nobody holds it
  ok(cancelTask(r, ctx("lead", 2 * MIN), "not needed"));
  ok(completeTask(r, ctx("carol", 2 * MIN), {}));
  // claiming it again (fence 2) lifts the rule, as does another agent's grant and release
  const again = ok(claimTask(r, ctx("alice", 2 * MIN), MIN)).record;
  ok(completeTask(again, ctx("alice", 3 * MIN), {}));
  const other = ok(releaseTask(ok(claimTask(r, ctx("dave", 2 * MIN), MIN)).record, ctx("dave", 2.5 * MIN))).record;
  ok(completeTask(other, ctx("alice", 4 * MIN), {}));
});

test("claimCandidates: todo and expired tasks, highest priority, then oldest, then id", () => {
  const old = fresh(3, "old", 1, 0);
  const newer = fresh(3, "newer", 1, 1000);
  const high = fresh(3, "high", 5, 2000);
  const b = fresh(3, "b", 1, 0);
  const held = ok(claimTask(fresh(3, "held", 9, 0), ctx("alice"), MIN)).record;
  const lapsed = ok(claimTask(fresh(3, "lapsed", 9, 500), ctx("alice"), MIN)).record;
  const done = ok(completeTask(fresh(3, "done", 9, 0), ctx("lead"), {})).record;
  const order = claimCandidates([newer, old, done, held, b, high, lapsed], ctx("bob", 30_000)).map((t) => t.id);
  assert.equal(order, ["high", "b", "old", "newer"]);
  const later = claimCandidates([newer, old, held, lapsed], ctx("bob", 2 * MIN)).map((t) => t.id);
  assert.equal(later, ["held", "lapsed", "old", "newer"]);
});

test("overview counts settled states and lists holders, expiring-soon and expired claims", () => {
  const a = ok(claimTask(fresh(3, "a"), ctx("alice"), 60 * MIN)).record;
  const b = ok(claimTask(fresh(3, "b"), ctx("bob"), 3 * MIN)).record;
  const c = ok(claimTask(fresh(3, "c"), ctx("carol"), MIN)).record;
  const o = buildOverview([a, b, c, fresh(3, "d")], new Date(T0 + 2 * MIN));
  assert.equal(o.counts, { todo: 2, claimed: 2, done: 0, failed: 0, cancelled: 0, review: 0 });
  assert.equal(o.holders.map((h) => h.agent), ["alice", "bob"]);
  assert.equal(o.expiring_soon.map((t) => t.task), ["b"]);
  assert.equal(o.expired.map((t) => t.task), ["c"]);
});

test("ids, durations and --since parse strictly", () => {
  for (const id of ["../x", "a/b", "x.lock", "@{", "a b", "", "a".repeat(65), ".x", "x.", "a..b", "a\x00"]) assert.ok(refComponentProblem(id), id);
  for (const id of ["t-1", "fix_parser", "v1.2", "a@b", "A+B"]) assert.is(refComponentProblem(id), null, id);
  const id = newTaskId(new Uint8Array(8).fill(255));
  assert.is(refComponentProblem(id), null);
  assert.is(id.length, 10);
  assert.is(parseDuration("90s"), 90_000);
  assert.is(parseDuration("1.5h"), 5_400_000);
  for (const bad of ["0s", "10", "abc", "999d", "-1m", "1y", ""]) assert.throws(() => parseDuration(bad), bad);
  const now = new Date(T0);
  assert.is(parseSince("2h", now).getTime(), T0 - 2 * 3_600_000);
  assert.is(parseSince("2026-11-29T09:00:00Z", now).getTime(), T0 - 3_600_000);
  assert.throws(() => parseSince("yesterday", now));
});

test.run();
