// The review queue. Verified work goes to `review` instead of `done`; a reviewer accepts it (done)
// or rejects it (todo, reason attached). A verification that fails is recorded on the task, which
// stays with its agent: known-broken work does not enter the reviewer's queue. Pure.
import type { DiffSummary } from "./diff-summary.ts";
import type { HandoffEvent } from "./event.ts";
import { refuse, type Outcome } from "./outcome.ts";
import type { Review, ReviewDecision, Verification } from "./review-record.ts";
import { failTask, heldRefusal, inReviewRefusal, reclaimedRefusal, settle, type OpContext } from "./task-ops.ts";
import { isFinal, MAX_NOTE, type Task } from "./task.ts";
import { handoffCommand } from "./shell-quote.ts";
import { textOrder } from "./text-order.ts";

export interface Submission {
  verification: Verification;
  commit: string | null;
  diff: DiffSummary | null;
  note?: string;
  /** The commit of the task's results ref sent with it (a worker's): named by the result it leaves. */
  results?: string;
}

function event(type: HandoffEvent["type"], task: Task, ctx: OpContext, extra: Partial<HandoffEvent> = {}): HandoffEvent {
  const { agent, scope, worktree, branch } = ctx.actor;
  return { type, task: task.id, agent, at: ctx.now.toISOString(), scope, worktree, branch, ...extra };
}

/** Whether the caller may finish the task now (checked before a long verification runs, and again after). */
export function submitProblem(t: Task, ctx: OpContext) {
  if (isFinal(t.status)) return { code: "final_state" as const, message: `task ${t.id} is ${t.status}`, data: { task: t.id, status: t.status } };
  if (t.status === "review") return inReviewRefusal(t);
  // `t` is settled: another agent's claim still on it is held, also past its expiry while inside
  // the takeover grace (clock skew), as finishing without verification judges it. Judged by the
  // expiry alone, a clone whose clock runs ahead submitted, and so took, a task still being worked on.
  if (t.claim && t.claim.agent !== ctx.actor.agent) return heldRefusal(t, ctx);
  return reclaimedRefusal(t, ctx, "finish");
}

export function submitForReview(task: Task, ctx: OpContext, s: Submission): Outcome<Task> {
  if (s.note !== undefined && s.note.length > MAX_NOTE) return refuse({ code: "invalid_input", message: `note is ${s.note.length} characters; at most ${MAX_NOTE}` });
  const settled = settle(task, ctx);
  const t = settled.record;
  const problem = submitProblem(t, ctx);
  if (problem) return refuse(problem);
  const at = ctx.now.toISOString();
  const review: Review = { submitted_by: ctx.actor.agent, submitted_at: at, commit: s.commit, diff: s.diff, verification: s.verification, decision: null };
  const v = s.verification;
  const verified = event("verified", t, ctx, { passed: v.passed, exit_code: v.exit_code, duration_ms: v.duration_ms, ...(s.commit ? { commit: s.commit } : {}) });
  if (!v.passed) {
    // Recorded, and the holder keeps the task (its lease renewed, as any update by the holder does).
    const claim = t.claim ? { ...t.claim, expires_at: new Date(ctx.now.getTime() + t.claim.ttl_ms).toISOString() } : null;
    const record: Task = { ...t, claim, review, updated_at: at };
    return { ok: true, record, steps: [...settled.steps, { event: verified, record }] };
  }
  const result = { ...(s.commit ? { commit: s.commit } : {}), ...(s.note !== undefined ? { note: s.note } : {}), ...(s.results ? { results: s.results } : {}) };
  const record: Task = { ...t, status: "review", claim: null, review, result, updated_at: at };
  const submitted = event("submitted", t, ctx, { ...(t.claim ? { fence: t.claim.fence } : {}), ...(s.commit ? { commit: s.commit } : {}), passed: true });
  return { ok: true, record, steps: [...settled.steps, { event: submitted, record }] };
}

/** Why a verification did not pass, in a few words and the command: a failed task's reason. */
export function verificationFailedReason(v: Verification): string {
  return `its verification ${v.timed_out ? "timed out" : `failed (exit ${v.exit_code ?? v.signal})`}: ${v.command}`;
}

/**
 * Finishing a task with a verify command where nobody can fix the work and run `done` again (a
 * worker): passed -> review, exactly as `done`; failed -> the verification recorded as `done`
 * records it, then the task failed with why, so whoever waits on it learns that it did not pass
 * instead of the task sitting claimed until its lease runs out.
 */
export function submitUnattended(task: Task, ctx: OpContext, s: Submission): Outcome<Task> {
  const out = submitForReview(task, ctx, s);
  if (!out.ok || s.verification.passed) return out;
  const failed = failTask(out.record, ctx, verificationFailedReason(s.verification), s.results);
  if (!failed.ok) return failed;
  return { ok: true, record: failed.record, steps: [...out.steps, ...failed.steps] };
}

function notInReview(t: Task, verb: string) {
  return refuse<Task>({
    code: "wrong_state",
    message: `cannot ${verb} task ${t.id}: it is ${t.status}, not in review`,
    data: { task: t.id, status: t.status },
    suggestions: [{ action: "work_elsewhere", detail: "see what awaits review: git handoff review" }],
  });
}

/** An author accepting its own work is no review: refused unless the policy says `review.allow_self: true`. */
export function selfReviewRefusal(t: Task, ctx: OpContext, allowSelf: boolean) {
  if (allowSelf || !t.review || t.review.submitted_by !== ctx.actor.agent) return null;
  return refuse<Task>({
    code: "self_review",
    message: `${ctx.actor.agent} submitted task ${t.id} and cannot accept its own review (review.allow_self is false in the policy read here: it must be true in the integration branch's .handoff.yaml, and this worktree's own file must not set it false)`,
    data: { task: t.id, submitted_by: t.review.submitted_by, key: "review.allow_self" },
    suggestions: [{ action: "negotiate", detail: `ask another agent or a person to run: ${handoffCommand("review", "accept", t.id)}` }],
  });
}

/**
 * `seen`: when the submission the caller judged was made (its submitted_at); a submission made
 * since (the work handed in again) is refused, not accepted or rejected unseen.
 */
function notTheOneSeen(t: Task, seen: string | undefined): Outcome<Task> | null {
  if (seen === undefined || !t.review || t.review.submitted_at === seen) return null;
  return refuse({
    code: "wrong_state",
    message: `the review of ${t.id} is not the one seen: ${t.review.submitted_by} submitted it again at ${t.review.submitted_at} (the one seen was submitted at ${seen})`,
    data: { task: t.id, submitted_at: t.review.submitted_at, seen },
    suggestions: [{ action: "retry", detail: `look again: ${handoffCommand("review")}` }],
  });
}

export function acceptReview(t: Task, ctx: OpContext, reason: string | null, opts: { allowSelf?: boolean; seen?: string } = {}): Outcome<Task> {
  if (t.status !== "review" || !t.review) return notInReview(t, "accept");
  const changed = notTheOneSeen(t, opts.seen);
  if (changed) return changed;
  if (reason && reason.length > MAX_NOTE) return refuse({ code: "invalid_input", message: `reason is ${reason.length} characters; at most ${MAX_NOTE}` });
  const self = selfReviewRefusal(t, ctx, !!opts.allowSelf);
  if (self) return self;
  const at = ctx.now.toISOString();
  const record: Task = { ...t, status: "done", review: { ...t.review, decision: { verdict: "accepted", by: ctx.actor.agent, at, reason } }, updated_at: at };
  return { ok: true, record, steps: [{ event: event("accepted", t, ctx, { ...(reason ? { reason } : {}), ...(t.review.commit ? { commit: t.review.commit } : {}) }), record }] };
}

export function rejectReview(t: Task, ctx: OpContext, reason: string | null, opts: { seen?: string } = {}): Outcome<Task> {
  if (t.status !== "review" || !t.review) return notInReview(t, "reject");
  const changed = notTheOneSeen(t, opts.seen);
  if (changed) return changed;
  if (reason && reason.length > MAX_NOTE) return refuse({ code: "invalid_input", message: `reason is ${reason.length} characters; at most ${MAX_NOTE}` });
  const at = ctx.now.toISOString();
  const record: Task = {
    ...t,
    status: "todo",
    claim: null,
    result: reason ? { reason } : null,
    review: { ...t.review, decision: { verdict: "rejected", by: ctx.actor.agent, at, reason } },
    updated_at: at,
  };
  return { ok: true, record, steps: [{ event: event("rejected", t, ctx, reason ? { reason } : {}), record }] };
}

/**
 * Why the task is being worked on again: its last submission was rejected in review (the decision,
 * with the reviewer's reason, stays on the task until it is submitted again). Null otherwise.
 */
export function rejectionToRework(t: Task): ReviewDecision | null {
  const d = t.review?.decision;
  return d?.verdict === "rejected" && t.status !== "review" ? d : null;
}

/** One line of the review queue. */
export interface ReviewItem {
  task: string;
  objective: string;
  submitted_by: string;
  submitted_at: string;
  commit: string | null;
  diff: DiffSummary | null;
  verification: Verification | null;
}

export function reviewQueue(tasks: Pick<Task, "id" | "objective" | "status" | "review">[]): ReviewItem[] {
  return tasks
    .filter((t) => t.status === "review" && t.review)
    .map((t) => ({
      task: t.id,
      objective: t.objective,
      submitted_by: t.review!.submitted_by,
      submitted_at: t.review!.submitted_at,
      commit: t.review!.commit,
      diff: t.review!.diff,
      verification: t.review!.verification,
    }))
    .sort((a, b) => textOrder(a.submitted_at, b.submitted_at));
}
