// The task state machine. Pure: state + intent + time -> new state (as a list of event steps)
// or a refusal that says who holds what and what the caller can do.
import type { Refusal, Suggestion } from "./errors.ts";
import type { HandoffEvent } from "./event.ts";
import type { Actor } from "./identity.ts";
import { refuse, type Outcome, type Step } from "./outcome.ts";
import { isFinal, MAX_NOTE, MAX_OBJECTIVE, MAX_SCOPE_GLOBS, type Reclaimed, type Task } from "./task.ts";
import { formatDuration, formatUntil } from "./duration.ts";
import type { Address } from "./address.ts";
import { handoffCommand } from "./shell-quote.ts";
import { claimLive, graceRefusal } from "./clock-skew.ts";
import { textOrder } from "./text-order.ts";

export interface OpContext {
  actor: Actor;
  now: Date;
  /**
   * How long past its expiry another agent's claim still counts as held (clock-skew.ts): with a
   * sync remote, max_clock_skew plus this clone's estimated offset. Absent: none.
   */
  takeoverGraceMs?: number;
}

function eventBase(type: HandoffEvent["type"], task: Pick<Task, "id">, ctx: OpContext): HandoffEvent {
  const { agent, scope, worktree, branch } = ctx.actor;
  return { type, task: task.id, agent, at: ctx.now.toISOString(), scope, worktree, branch };
}

function touch(task: Task, ctx: OpContext, patch: Partial<Task>): Task {
  return { ...task, ...patch, updated_at: ctx.now.toISOString() };
}

export function isLive(task: Pick<Task, "status" | "claim">, now: Date): boolean {
  return task.status === "claimed" && task.claim !== null && Date.parse(task.claim.expires_at) > now.getTime();
}

/**
 * Whether `agent` holds `task` with a live claim, so that claiming it again renews that claim:
 * the rules for new grants (dependencies done, capacity, addressing) are not asked again. Its own
 * expired claim is no hold: claiming again is a new grant (a higher fence), checked like any.
 */
export function holdsLive(task: Task, agent: string, now: Date): boolean {
  return isLive(task, now) && task.claim!.agent === agent;
}

export interface NewTaskInput {
  id: string;
  objective: string;
  priority: number;
  scope: string[];
  maxAttempts: number;
  exclusive?: boolean;
  /** Tasks this one waits on; the caller checks that they exist. */
  after?: string[];
  /** The command that verifies the work. */
  verify?: string | null;
  /** Who may take it (address.ts); absent: anyone. */
  to?: Address | null;
  /** The commit of its inputs ref, written in the same transaction (handover); null: none. */
  inputs?: string | null;
}

export function createTask(input: NewTaskInput, ctx: OpContext): Outcome<Task> {
  const objective = input.objective.trim();
  if (!objective) return refuse({ code: "invalid_input", message: "a task needs an objective" });
  if (objective.length > MAX_OBJECTIVE) {
    return refuse({ code: "invalid_input", message: `objective is ${objective.length} characters; at most ${MAX_OBJECTIVE}` });
  }
  const badScope = scopeProblem(input.scope);
  if (badScope) return refuse({ code: "invalid_input", message: badScope });
  const at = ctx.now.toISOString();
  const task: Task = {
    id: input.id,
    objective,
    status: "todo",
    priority: input.priority,
    scope: input.scope,
    claim: null,
    attempts: 0,
    max_attempts: input.maxAttempts,
    fence: 0,
    created_by: ctx.actor.agent,
    created_at: at,
    updated_at: at,
    result: null,
    ...(input.exclusive ? { exclusive: true } : {}),
    ...(input.after?.length ? { after: input.after } : {}),
    ...(input.verify ? { verify: input.verify } : {}),
    ...(input.to ? { to: input.to } : {}),
  };
  // Every task names its inputs from its first commit, none too: a reader takes exactly that
  // commit (or none), never whatever refs/handoff/inputs/<id> holds since.
  const event = { ...eventBase("created", task, ctx), objective, ...(task.after?.length ? { after: task.after } : {}), inputs: input.inputs ?? null };
  return { ok: true, record: task, steps: [{ event, record: task }] };
}

const MAX_GLOB_LENGTH = 1000;

/** Scope globs are stored and matched by other agents: keep them few, short and printable. */
export function scopeProblem(scope: string[]): string | null {
  if (scope.length > MAX_SCOPE_GLOBS) return `a task may have at most ${MAX_SCOPE_GLOBS} scope globs, got ${scope.length}`;
  for (const glob of scope) {
    if (!glob.trim()) return "a scope glob may not be empty";
    if (glob.length > MAX_GLOB_LENGTH) return `scope glob is ${glob.length} characters; at most ${MAX_GLOB_LENGTH}`;
    if (/[\x00-\x1f\x7f]/.test(glob)) return `scope glob ${JSON.stringify(glob.slice(0, 80))} contains control characters`;
  }
  return null;
}

/**
 * Lazy lease recovery: an expired claim is free. Readers show the settled state; the next writer
 * records the `expired` (and, when attempts run out, `failed`) events in its own compare-and-swap.
 */
/** What settling reads of a task: a view's narrower record (core/view-task.ts) is settled as a whole one is. */
export type Settleable = Pick<Task, "id" | "status" | "claim" | "attempts" | "max_attempts" | "updated_at">;

export function settle<T extends Settleable>(task: T, ctx: OpContext): { record: T; steps: Step<T>[] } {
  const claim = task.claim;
  if (task.status !== "claimed" || !claim || !expiredFor(claim, ctx)) {
    return { record: task, steps: [] };
  }
  const attempts = task.attempts + 1;
  const expiredEvent: HandoffEvent = {
    type: "expired",
    task: task.id,
    agent: claim.agent,
    at: ctx.now.toISOString(),
    scope: claim.scope,
    worktree: claim.worktree,
    branch: claim.branch,
    by: ctx.actor.agent,
    fence: claim.fence,
    expires_at: claim.expires_at,
  };
  // The task changed when its claim ran out, not when someone looked: a reader's view of it is the
  // same at every look (a write touches it again with its own time).
  const at = textOrder(claim.expires_at, task.updated_at) > 0 ? claim.expires_at : task.updated_at;
  const freed: T = { ...task, status: "todo", claim: null, attempts, updated_at: at };
  const steps: Step<T>[] = [{ event: expiredEvent, record: freed }];
  if (attempts < task.max_attempts) return { record: freed, steps };
  const reason = `lease expired ${attempts} time${attempts === 1 ? "" : "s"} without completion (max_attempts ${task.max_attempts})`;
  const failed: T = { ...freed, status: "failed", result: { reason } };
  steps.push({ event: { ...eventBase("failed", task, ctx), reason }, record: failed });
  return { record: failed, steps };
}

/** Whether `claim` has expired for the caller: its own at once, another agent's only past the grace. */
function expiredFor(claim: NonNullable<Task["claim"]>, ctx: OpContext): boolean {
  return !claimLive(claim.expires_at, claim.agent === ctx.actor.agent ? 0 : (ctx.takeoverGraceMs ?? 0), ctx.now);
}

export function finalRefusal(task: Task): Refusal {
  return {
    code: "final_state",
    message: `task ${task.id} is ${task.status}${task.result?.reason ? ` (${task.result.reason})` : ""}`,
    data: { task: task.id, status: task.status },
    suggestions: [{ action: "work_elsewhere", detail: "take other work: git handoff claim --next" }],
  };
}

/** A task in review is nobody's to work on until a reviewer accepts or rejects it. */
export function inReviewRefusal(task: Task): Refusal {
  return {
    code: "wrong_state",
    message: `task ${task.id} is in review${task.review?.submitted_by ? ` (submitted by ${task.review.submitted_by})` : ""}`,
    data: { task: task.id, status: task.status },
    suggestions: [
      { action: "wait", detail: `wait for the review: git handoff review accept|reject ${task.id}` },
      { action: "work_elsewhere", detail: "take other work: git handoff ready --claim" },
    ],
  };
}

/** The refusal every front end shows when someone else holds the task. */
export function heldRefusal(task: Task, ctx: OpContext): Refusal {
  const claim = task.claim!;
  const left = Date.parse(claim.expires_at) - ctx.now.getTime();
  const where = claim.worktree ? ` in ${claim.worktree}${claim.branch ? ` (${claim.branch})` : ""}` : "";
  if (left <= 0) return graceRefusal(task, ctx, -left);
  const suggestions: Suggestion[] = [
    { action: "wait", detail: `wait until it is released or the lease expires at ${claim.expires_at} (in ${formatDuration(left)})` },
    { action: "negotiate", detail: `ask ${claim.agent}${where} to release it: ${handoffCommand("ask", claim.agent, "--release", task.id)}` },
    { action: "work_elsewhere", detail: "take other work: git handoff claim --next" },
  ];
  return {
    code: "held_by_other",
    message: `task ${task.id} is held by ${claim.agent}${where} until ${claim.expires_at} (${formatUntil(left)})`,
    data: { task: task.id, holder: claim.agent, expires_at: claim.expires_at, fence: claim.fence, worktree: claim.worktree, branch: claim.branch },
    suggestions,
  };
}

/**
 * The task's last reclaim while it still binds its agent (see reclaimedRefusal): nobody holds the
 * task, no grant came since and it is not finished. A task with one is written in task format 2,
 * which builds that would drop the field hold back (src/store/task-format.ts).
 */
export function bindingReclaim(task: Task): Reclaimed | null {
  const r = task.reclaimed;
  return r && !task.claim && r.fence === task.fence && !isFinal(task.status) ? r : null;
}

/**
 * "Anyone while nobody holds it" does not include the agent whose grant was just taken away by a
 * reclaim: someone decided that work should not stand, so it claims the task again (and the
 * reclaimer sees it) before finishing it. A grant since (a higher fence) ends the rule.
 */
export function reclaimedRefusal(task: Task, ctx: OpContext, verb: string): Refusal | null {
  const r = bindingReclaim(task);
  if (!r || r.agent !== ctx.actor.agent) return null;
  return {
    code: "not_holder",
    message: `cannot ${verb} task ${task.id}: ${r.by} reclaimed it from ${r.agent} (fence ${r.fence}) at ${r.at}; claim it again first`,
    data: { task: task.id, status: task.status, reclaimed_by: r.by, reclaimed_at: r.at, fence: r.fence },
    suggestions: [
      { action: "retry", detail: `claim it again: ${handoffCommand("claim", task.id)}` },
      { action: "negotiate", detail: `see why (${handoffCommand("events", "--task", task.id)}) and ask ${r.by} before doing more on it` },
    ],
  };
}

function notHolderRefusal(task: Task, ctx: OpContext, verb: string): Refusal {
  return {
    code: "not_holder",
    message: `cannot ${verb} task ${task.id}: ${ctx.actor.agent} does not hold it (status ${task.status})`,
    data: { task: task.id, status: task.status },
    suggestions: [{ action: "retry", detail: `claim it first: ${handoffCommand("claim", task.id)}` }],
  };
}

/** Settles lazily, then lets `decide` act on the settled task; expiry steps come first. */
function afterSettle(task: Task, ctx: OpContext, decide: (t: Task) => Outcome<Task>): Outcome<Task> {
  const settled = settle(task, ctx);
  const out = decide(settled.record);
  if (!out.ok) return out;
  return { ok: true, record: out.record, steps: [...settled.steps, ...out.steps] };
}

export function claimTask(task: Task, ctx: OpContext, ttlMs: number): Outcome<Task> {
  return afterSettle(task, ctx, (t) => {
    if (isFinal(t.status)) return refuse(finalRefusal(t));
    if (t.status === "review") return refuse(inReviewRefusal(t));
    if (t.claim && t.claim.agent !== ctx.actor.agent) return refuse(heldRefusal(t, ctx));
    if (t.claim) return renewTask(t, ctx, ttlMs); // claiming what you hold renews it
    const fence = t.fence + 1;
    const expires = new Date(ctx.now.getTime() + ttlMs).toISOString();
    const { agent, worktree, branch, scope } = ctx.actor;
    const claim = { agent, claimed_at: ctx.now.toISOString(), expires_at: expires, fence, ttl_ms: ttlMs, worktree, branch, scope };
    const record = touch(t, ctx, { status: "claimed", claim, fence });
    return { ok: true, record, steps: [{ event: { ...eventBase("claimed", t, ctx), fence, expires_at: expires }, record }] };
  });
}

/** Holder-only operations share this guard: refuse unless the caller holds a live claim. */
function requireHolder(t: Task, ctx: OpContext, verb: string): Refusal | null {
  if (isFinal(t.status)) return finalRefusal(t);
  if (!t.claim) return notHolderRefusal(t, ctx, verb);
  if (t.claim.agent !== ctx.actor.agent) return heldRefusal(t, ctx);
  return null;
}

export function renewTask(task: Task, ctx: OpContext, ttlMs?: number): Outcome<Task> {
  return afterSettle(task, ctx, (t) => {
    const refusal = requireHolder(t, ctx, "renew");
    if (refusal) return refuse(refusal);
    const claim = t.claim!;
    const ttl = ttlMs ?? claim.ttl_ms;
    const expires = new Date(ctx.now.getTime() + ttl).toISOString();
    const record = touch(t, ctx, { claim: { ...claim, expires_at: expires, ttl_ms: ttl } });
    return { ok: true, record, steps: [{ event: { ...eventBase("renewed", t, ctx), fence: claim.fence, expires_at: expires }, record }] };
  });
}

export function releaseTask(task: Task, ctx: OpContext): Outcome<Task> {
  return afterSettle(task, ctx, (t) => {
    const refusal = requireHolder(t, ctx, "release");
    if (refusal) return refuse(refusal);
    const record = touch(t, ctx, { status: "todo", claim: null });
    return { ok: true, record, steps: [{ event: { ...eventBase("released", t, ctx), fence: t.claim!.fence }, record }] };
  });
}

function checkText(text: string | undefined, what: string): Refusal | null {
  if (text !== undefined && text.length > MAX_NOTE) {
    return { code: "invalid_input", message: `${what} is ${text.length} characters; at most ${MAX_NOTE}` };
  }
  return null;
}

/**
 * Finishing (done, fail, cancel) is for the holder, or for anyone while nobody holds the task:
 * a person may close a task no agent picked up, but never one another agent is working on.
 */
function finish(
  task: Task,
  ctx: OpContext,
  type: "done" | "failed" | "cancelled",
  result: { commit?: string; note?: string; reason?: string; results?: string },
): Outcome<Task> {
  const bad = checkText(result.note, "note") ?? checkText(result.reason, "reason");
  if (bad) return refuse(bad);
  return afterSettle(task, ctx, (t) => {
    if (isFinal(t.status)) return refuse(finalRefusal(t));
    if (t.status === "review" && type === "done") return refuse(inReviewRefusal(t));
    // The creator may cancel what it asked for even while a worker holds it (the worker stops).
    const creatorCancels = type === "cancelled" && t.created_by === ctx.actor.agent;
    if (t.claim && t.claim.agent !== ctx.actor.agent && !creatorCancels) return refuse(heldRefusal(t, ctx));
    const taken = creatorCancels ? null : reclaimedRefusal(t, ctx, type === "done" ? "finish" : type === "failed" ? "fail" : "cancel");
    if (taken) return refuse(taken);
    const status = type;
    const record = touch(t, ctx, { status, claim: null, result: { ...result } });
    const fence = t.claim?.fence;
    const event: HandoffEvent = { ...eventBase(type, t, ctx), ...(fence !== undefined ? { fence } : {}), ...result };
    return { ok: true, record, steps: [{ event, record }] };
  });
}

/** `results`: the commit of the task's results ref this completion sends (handover). */
export function completeTask(task: Task, ctx: OpContext, result: { commit?: string; note?: string; results?: string }): Outcome<Task> {
  return finish(task, ctx, "done", result);
}

export function failTask(task: Task, ctx: OpContext, reason: string, results?: string): Outcome<Task> {
  if (!reason.trim()) return refuse({ code: "invalid_input", message: "fail needs a --reason" });
  return finish(task, ctx, "failed", { reason, ...(results !== undefined ? { results } : {}) });
}

export function cancelTask(task: Task, ctx: OpContext, reason: string): Outcome<Task> {
  if (!reason.trim()) return refuse({ code: "invalid_input", message: "cancel needs a --reason" });
  return finish(task, ctx, "cancelled", { reason });
}

/**
 * Force release: an explicit, logged override of someone's claim, live or expired (an expired one
 * is settled first, as any write does, and the reclaim is logged on top with its reason). `seen`:
 * the fence of the claim the caller decided to reclaim; a claim granted since is refused.
 */
export function reclaimTask(task: Task, ctx: OpContext, reason: string, seen?: number): Outcome<Task> {
  if (!reason.trim()) return refuse({ code: "invalid_input", message: "reclaim needs a --reason" });
  const bad = checkText(reason, "reason");
  if (bad) return refuse(bad);
  return afterSettle(task, ctx, (t) => {
    if (isFinal(t.status)) return refuse(finalRefusal(t));
    const held = t.claim ?? (task.status === "claimed" ? task.claim : null);
    if (!held) {
      return refuse({
        code: "not_holder",
        message: `task ${t.id} is not claimed: nothing to reclaim`,
        data: { task: t.id, status: t.status },
        suggestions: [{ action: "retry", detail: `claim it: ${handoffCommand("claim", t.id)}` }],
      });
    }
    if (seen !== undefined && held.fence !== seen) {
      return refuse({
        code: "wrong_state",
        message: `the claim on ${t.id} is not the one seen: ${held.agent} holds it with fence ${held.fence}, the one seen had fence ${seen}`,
        data: { task: t.id, holder: held.agent, fence: held.fence, seen },
        suggestions: [{ action: "retry", detail: `look again: ${handoffCommand("task", "show", t.id)}` }],
      });
    }
    const reclaimed = { agent: held.agent, fence: held.fence, by: ctx.actor.agent, at: ctx.now.toISOString() };
    const record = touch(t, ctx, { status: "todo", claim: null, reclaimed });
    const event: HandoffEvent = { ...eventBase("reclaimed", t, ctx), holder: held.agent, fence: held.fence, reason };
    return { ok: true, record, steps: [{ event, record }] };
  });
}

/** Tasks `claim --next` may take, best first: highest priority, then oldest, then id. */
export function claimCandidates(tasks: Task[], ctx: OpContext): Task[] {
  return tasks
    .map((t) => settle(t, ctx).record)
    .filter((t) => t.status === "todo")
    .sort((a, b) => b.priority - a.priority || textOrder(a.created_at, b.created_at) || textOrder(a.id, b.id));
}
