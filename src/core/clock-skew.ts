// Clocks of clones disagree. A lease is judged by wall-clock time, so a clone whose clock runs
// ahead would see another agent's live lease as expired and take it over. A takeover of another
// agent's expired claim through a remote therefore waits a grace past the expiry: the repository's
// max_clock_skew (how far any holder's clock may be off) plus this clone's own estimated offset
// (positive: this clock is ahead). A clone known to be off by more than max_clock_skew makes no
// exclusive grant through the remote at all. Pure: the offset estimate is a parameter.
import type { Refusal } from "./errors.ts";
import { formatDuration } from "./duration.ts";
import type { Task } from "./task.ts";
import type { OpContext } from "./task-ops.ts";

/** What is known of this clone's clock against the others'. */
export interface ClockOffset {
  /** This clock minus the reference, in ms: positive when this clock is ahead. */
  offsetMs: number;
  /** Where the estimate comes from. */
  source: "http-date" | "commits";
  /** How far off the estimate itself may be (ms). */
  uncertaintyMs: number;
  /** How many observations it rests on. */
  samples: number;
}

/**
 * How far a received time may run ahead of this clock, and an event behind its parent's, before
 * a clone refuses the history (src/sync/validate-receive.ts).
 */
export const HISTORY_SKEW_MS = 5 * 60_000;

export function claimLive(expiresAt: string, graceMs: number, now: Date): boolean {
  return Date.parse(expiresAt) + graceMs > now.getTime();
}

/**
 * When another agent's claim of `task`, expired by this clock, stops standing for the caller (its
 * expiry plus the takeover grace), or null: not claimed, the caller's own (the grace is for other
 * clocks), not expired, or past the grace. What a view shows beside such a claim, as a claim of
 * the task is refused until then (graceRefusal): the claim's counterpart of lease.ts graceUntil.
 */
export function claimGraceUntil(task: Pick<Task, "status" | "claim">, ctx: OpContext): string | null {
  const c = task.status === "claimed" ? task.claim : null;
  const grace = ctx.takeoverGraceMs ?? 0;
  if (!c || c.agent === ctx.actor.agent || claimLive(c.expires_at, 0, ctx.now) || !claimLive(c.expires_at, grace, ctx.now)) return null;
  return new Date(Date.parse(c.expires_at) + grace).toISOString();
}

/**
 * Whose view it is, and the takeover grace other agents' expired claims and leases stand for in it
 * (with a sync remote: Store.writeContext): what the views (status, the roster, the lease rows)
 * judge by, so they show held what a write would refuse.
 */
export interface Viewer {
  agent: string;
  graceMs: number;
}

/** The context a view settles tasks by (task-ops.ts settle): the viewer's grace for other agents' claims; no viewer, nobody's and no grace. */
export function viewerContext(now: Date, viewer?: Viewer): OpContext {
  return { now, actor: { agent: viewer?.agent ?? "", worktree: null, branch: null, scope: "primary" as const }, ...(viewer?.graceMs ? { takeoverGraceMs: viewer.graceMs } : {}) };
}

/** The viewer a context judges as: its actor, its grace. */
export function viewerOf(ctx: OpContext): Viewer {
  return { agent: ctx.actor.agent, graceMs: ctx.takeoverGraceMs ?? 0 };
}

/** The grace a takeover waits past another agent's expiry: max_clock_skew plus the offset, never negative. */
export function takeoverGrace(maxSkewMs: number, offset: ClockOffset | null): number {
  return Math.max(0, maxSkewMs + (offset?.offsetMs ?? 0));
}

/** The refusal of an exclusive grant by a clone whose clock is known to be off by more than max_clock_skew, or null. */
export function skewRefusal(maxSkewMs: number, offset: ClockOffset | null, remote: string): Refusal | null {
  if (!offset || Math.abs(offset.offsetMs) - offset.uncertaintyMs <= maxSkewMs) return null;
  const way = offset.offsetMs > 0 ? "ahead of" : "behind";
  const off = formatDuration(Math.abs(offset.offsetMs));
  const why = offset.offsetMs > 0 ? "it would take over leases that are still live elsewhere" : "the leases it writes would look expired everywhere else";
  return {
    code: "clock_skew",
    message: `this clone's clock is ${off} ${way} ${offset.source === "http-date" ? `the sync remote ${remote}` : "the other clones"} (more than max_clock_skew ${formatDuration(maxSkewMs)}): no exclusive grant through the remote, since ${why}`,
    data: { offset_ms: offset.offsetMs, max_clock_skew_ms: maxSkewMs, source: offset.source, samples: offset.samples, remote },
    suggestions: [
      { action: "fix_input", detail: "set the system clock right (NTP: timedatectl set-ntp true), then run the command again" },
      { action: "work_elsewhere", detail: "or see the estimate: git handoff doctor" },
    ],
  };
}

/** Another agent's claim, expired by its own clock but still inside the takeover grace. */
export function graceRefusal(task: Task, ctx: OpContext, expiredAgoMs: number): Refusal {
  const claim = task.claim!;
  const grace = ctx.takeoverGraceMs ?? 0;
  const waitMs = Math.max(0, grace - expiredAgoMs);
  return {
    code: "held_by_other",
    message: `task ${task.id} is held by ${claim.agent}: its lease expired at ${claim.expires_at}, ${formatDuration(expiredAgoMs)} ago, but a takeover waits ${formatDuration(grace)} past the expiry for clock skew (max_clock_skew plus this clock's offset), ${formatDuration(waitMs)} more`,
    data: { task: task.id, holder: claim.agent, expires_at: claim.expires_at, fence: claim.fence, takeover_grace_ms: grace, worktree: claim.worktree, branch: claim.branch },
    suggestions: [
      { action: "wait", detail: `wait ${formatDuration(waitMs)}, then claim it` },
      { action: "work_elsewhere", detail: "take other work: git handoff claim --next" },
    ],
  };
}
