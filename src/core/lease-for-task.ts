// When a lease taken "for" a task is justified: exactly while its holder holds the task, the task
// settled as every view and write settles it (task-ops.ts settle: the holder's own claim ends at
// its expiry, another agent's only past the takeover grace). One rule, asked twice: `lease --task`
// (store/lease-actions.ts) refuses to write a lease it would not justify, and doctor and doctor
// --repair (outlived-leases.ts) report and remove one that no longer is. They once disagreed:
// `lease --task` let an agent lease for a task nobody held, one in review, or one whose claim of
// its own had run out, and doctor then failed the repository for exactly that lease.
import type { Refusal } from "./errors.ts";
import { handoffCommand } from "./shell-quote.ts";
import { finalRefusal, heldRefusal, inReviewRefusal, reclaimedRefusal, settle, type OpContext } from "./task-ops.ts";
import { isFinal, type Task } from "./task.ts";

/**
 * Why a lease would not be justified: lapsed: the task is stored as claimed by the lease's holder,
 * but that claim ran out (for another agent's view, past the grace too); ended: the task is finished
 * or in review; not_held: nobody holds it, or another agent does.
 */
export type UnjustifiedWhy = "lapsed" | "ended" | "not_held";

/**
 * Null when a lease of `agent`'s for `stored` (as stored) is justified by `ctx`: the task, settled
 * by `ctx`, is claimed by `agent`. Otherwise the task as settled, and why not.
 */
export function unjustifiedTaskLease(stored: Task, agent: string, ctx: OpContext): { task: Task; why: UnjustifiedWhy } | null {
  const task = settle(stored, ctx).record;
  if (task.status === "claimed" && task.claim?.agent === agent) return null;
  const why = stored.status === "claimed" && stored.claim?.agent === agent ? "lapsed" : isFinal(task.status) || task.status === "review" ? "ended" : "not_held";
  return { task, why };
}

/**
 * The refusal of a lease for `stored` by the caller (`ctx.actor`), null when the caller holds it,
 * in the words other verbs use for the same state: finished, in review, held by another agent
 * (inside the grace too), reclaimed from the caller; else the caller does not hold it (nobody does,
 * or its own claim ran out): claim it first, or lease without a task.
 */
export function leaseForTaskRefusal(stored: Task, ctx: OpContext): Refusal | null {
  const unjustified = unjustifiedTaskLease(stored, ctx.actor.agent, ctx);
  if (!unjustified) return null;
  const task = unjustified.task;
  if (isFinal(task.status)) return finalRefusal(task);
  if (task.status === "review") return inReviewRefusal(task);
  if (task.claim) return heldRefusal(task, ctx);
  return reclaimedRefusal(task, ctx, "lease for") ?? notHeldRefusal(task, unjustified.why === "lapsed" ? stored.claim!.expires_at : null, ctx);
}

/** `ranOut`: when the caller's own claim on it expired, if that is why it does not hold it. */
function notHeldRefusal(task: Task, ranOut: string | null, ctx: OpContext): Refusal {
  return {
    code: "not_holder",
    message: `cannot lease for task ${task.id}: ${ctx.actor.agent} does not hold it (status ${task.status}${ranOut ? `; its claim ran out at ${ranOut}` : ""})`,
    data: { task: task.id, status: task.status, ...(ranOut ? { expired_at: ranOut } : {}) },
    suggestions: [
      { action: "retry", detail: `claim it first: ${handoffCommand("claim", task.id)}` },
      { action: "fix_input", detail: "or lease the paths without --task (the lease then stands on its own TTL)" },
    ],
  };
}
