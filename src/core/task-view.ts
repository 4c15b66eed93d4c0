// A task as a reader sees it: settled (lazy expiry) by the caller's context, the takeover grace
// included, so a view shows held what a claim would be refused (clock-skew.ts), marked with when
// that stops.
import { claimGraceUntil } from "./clock-skew.ts";
import type { Task } from "./task.ts";
import { settle, type OpContext } from "./task-ops.ts";

/** `grace_until`: another agent's claim, expired by this clock, stands for the takeover grace until then. */
export type ShownTask = Task & { grace_until?: string };

/**
 * `task` settled by `ctx` (the caller's own expired claim is free at once; another agent's stands
 * through `ctx.takeoverGraceMs`), with `grace_until` on a claim that stands only for the grace.
 */
export function shownTask(task: Task, ctx: OpContext): ShownTask {
  const t = settle(task, ctx).record;
  const until = claimGraceUntil(t, ctx);
  return until ? { ...t, grace_until: until } : t;
}
