// Structured handoffs: the producer records what it hands over on the task; consumers see it in
// their inbox until they acknowledge it, so each consumer gets it once. Pure.
import type { HandoffEvent } from "./event.ts";
import { Handoff, MAX_HANDOFF_TEXT, MAX_QUESTIONS } from "./handoff-record.ts";
import type { DiffSummary } from "./diff-summary.ts";
import { refuse, type Outcome } from "./outcome.ts";
import { UNTRUSTED_LABEL } from "./untrusted.ts";
import { heldRefusal, isLive, settle, type OpContext } from "./task-ops.ts";
import type { Task } from "./task.ts";
import { handoffCommand } from "./shell-quote.ts";
import { textOrder } from "./text-order.ts";

export const MAX_HANDOFFS_PER_TASK = 50;

export function untrustedNotice(producer: string): string {
  return `contract, verify, questions and note are ${UNTRUSTED_LABEL.replace(/^untrusted: /, "untrusted, ")} (from ${producer})`;
}

export interface HandoffInput {
  to: string | null;
  commit: string | null;
  diff: DiffSummary | null;
  contract: string | null;
  verify: string | null;
  questions: string[];
  note: string | null;
}

function tooLong(what: string, text: string | null): string | null {
  return text !== null && text.length > MAX_HANDOFF_TEXT ? `${what} is ${text.length} characters; at most ${MAX_HANDOFF_TEXT} (put long text in a file in the commit)` : null;
}

/** Bounds on what a handoff may carry; checked before anything is read or written. */
export function handoffInputProblem(input: Pick<HandoffInput, "contract" | "verify" | "questions" | "note">): string | null {
  if (input.questions.length > MAX_QUESTIONS) return `${input.questions.length} questions; at most ${MAX_QUESTIONS}`;
  return (
    tooLong("--contract", input.contract) ??
    tooLong("--verify", input.verify) ??
    tooLong("--note", input.note) ??
    input.questions.map((q, i) => tooLong(`--question ${i + 1}`, q)).find((p) => p !== null) ??
    null
  );
}

function event(type: "handoff" | "acked", task: Task, ctx: OpContext, extra: Partial<HandoffEvent>): HandoffEvent {
  const { agent, scope, worktree, branch } = ctx.actor;
  return { type, task: task.id, agent, at: ctx.now.toISOString(), scope, worktree, branch, ...extra };
}

/** The producer (the caller) hands over: allowed to the holder, or to anyone while nobody holds it. */
export function recordHandoff(task: Task, input: HandoffInput, ctx: OpContext): Outcome<Task> {
  const problem = handoffInputProblem(input);
  if (problem) return refuse({ code: "invalid_input", message: problem });
  const settled = settle(task, ctx);
  const t = settled.record;
  if (t.status === "cancelled") return refuse({ code: "final_state", message: `task ${t.id} is cancelled: nothing to hand off`, data: { task: t.id, status: t.status } });
  // Settled by the caller's context: another agent's claim still here is live or inside the
  // takeover grace (clock skew), and holds the task as a claim of it would be refused.
  if (t.status === "claimed" && t.claim && t.claim.agent !== ctx.actor.agent) return refuse(heldRefusal(t, ctx));
  const existing = t.handoffs ?? [];
  if (existing.length >= MAX_HANDOFFS_PER_TASK) return refuse({ code: "invalid_input", message: `task ${t.id} already has ${MAX_HANDOFFS_PER_TASK} handoffs` });
  const handoff: Handoff = {
    id: `${t.id}#${existing.length + 1}`,
    task: t.id,
    producer: ctx.actor.agent,
    to: input.to,
    commit: input.commit,
    diff: input.diff,
    contract: input.contract,
    verify: input.verify,
    questions: input.questions,
    note: input.note,
    created_at: ctx.now.toISOString(),
    acked_by: [],
    notice: untrustedNotice(ctx.actor.agent),
  };
  // Handing over counts as an update by the holder, so it renews the lease like any other.
  const claim = t.claim && t.claim.agent === ctx.actor.agent ? { ...t.claim, expires_at: new Date(ctx.now.getTime() + t.claim.ttl_ms).toISOString() } : t.claim;
  const record: Task = { ...t, claim, handoffs: [...existing, handoff], updated_at: ctx.now.toISOString() };
  const ev = event("handoff", t, ctx, { handoff: handoff.id, to: input.to, ...(input.commit ? { commit: input.commit } : {}) });
  return { ok: true, record, steps: [...settled.steps, { event: ev, record }] };
}

/** `<task>#<n>` -> its parts, or null when it is not a handoff id. */
export function parseHandoffId(id: string): { task: string; n: number } | null {
  const m = /^(.+)#([1-9]\d{0,3})$/.exec(id);
  return m ? { task: m[1]!, n: Number(m[2]) } : null;
}

export function ackHandoff(task: Task, handoffId: string, ctx: OpContext, opts: { allowSelf?: boolean } = {}): Outcome<Task> {
  const handoffs = task.handoffs ?? [];
  const h = handoffs.find((x) => x.id === handoffId);
  if (!h) {
    return refuse({
      code: "not_found",
      message: `no handoff ${handoffId} on task ${task.id}`,
      data: { handoff: handoffId, task: task.id, handoffs: handoffs.map((x) => x.id) },
      suggestions: [{ action: "fix_input", detail: "see what waits for you: git handoff inbox" }],
    });
  }
  if (h.producer === ctx.actor.agent && !opts.allowSelf) {
    return refuse({
      code: "self_review",
      message: `${ctx.actor.agent} produced handoff ${handoffId} and cannot acknowledge it itself (review.allow_self is false in the policy read here: it must be true in the integration branch's .handoff.yaml, and this worktree's own file must not set it false)`,
      data: { handoff: handoffId, producer: h.producer, key: "review.allow_self" },
      suggestions: [{ action: "negotiate", detail: `the consumer acknowledges it: ${handoffCommand("ack", handoffId)}` }],
    });
  }
  if (h.acked_by.some((a) => a.agent === ctx.actor.agent)) return { ok: true, record: task, steps: [] };
  const acked: Handoff = { ...h, acked_by: [...h.acked_by, { agent: ctx.actor.agent, at: ctx.now.toISOString() }] };
  const record: Task = { ...task, handoffs: handoffs.map((x) => (x.id === handoffId ? acked : x)), updated_at: ctx.now.toISOString() };
  return { ok: true, record, steps: [{ event: event("acked", task, ctx, { handoff: handoffId }), record }] };
}

export interface InboxEntry {
  handoff: Handoff;
  /** `addressed`: sent to this agent; `dependent`: it holds `via`, a task that waits on the handoff's task. */
  reason: "addressed" | "dependent";
  via: string | null;
  /** The handoff's task state: a dependent consumer usually wants it `done`. */
  task_status: Task["status"];
}

/** Handoffs waiting for `agent`: addressed to it, or on tasks its claimed tasks wait on; not yet acked. */
export function inboxFor(agent: string, tasks: Pick<Task, "id" | "status" | "claim" | "after" | "handoffs">[], now: Date): InboxEntry[] {
  const waitsOn = new Map<string, string>();
  for (const t of tasks) {
    if (!isLive(t, now) || t.claim!.agent !== agent) continue;
    for (const dep of t.after ?? []) if (!waitsOn.has(dep)) waitsOn.set(dep, t.id);
  }
  const entries: InboxEntry[] = [];
  for (const t of tasks) {
    for (const h of t.handoffs ?? []) {
      if (h.acked_by.some((a) => a.agent === agent)) continue;
      if (h.to === agent) entries.push({ handoff: h, reason: "addressed", via: null, task_status: t.status });
      else if (h.to === null && waitsOn.has(t.id)) entries.push({ handoff: h, reason: "dependent", via: waitsOn.get(t.id)!, task_status: t.status });
    }
  }
  return entries.sort((a, b) => textOrder(a.handoff.created_at, b.handoff.created_at));
}
