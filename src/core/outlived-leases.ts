// Which task leases outlived their work: a lease in force by this clock that serves a task its
// holder no longer works on, the task settled as every view and write settles it (task-ops.ts
// settle), by the rule `lease --task` refuses by (lease-for-task.ts). The one judgement behind
// doctor's lease check and doctor --repair's sweep (store/lease-sweep.ts): what one reports the
// other removes, what one keeps the other does not report. Settling is what they once disagreed
// on: a claim that ran out is stored as its holder's until a writer records the expiry, while
// every reader already treats it as free (another agent's only past the takeover grace,
// clock-skew.ts), so a lease its holder took for the task after it ran out was reported by the
// view and kept by the sweep, which read the stored claim.
import { isLeaseLive, type Lease } from "./lease.ts";
import { unjustifiedTaskLease, type UnjustifiedWhy } from "./lease-for-task.ts";
import type { Task } from "./task.ts";
import type { OpContext } from "./task-ops.ts";

/** A lease that outlived its work: its task as settled, and why. */
export interface OutlivedLease {
  lease: Lease;
  /** The lease's task, settled by the judging context. */
  task: Task;
  /** The task as stored (a lapsed claim is still in it). */
  was: Task;
  /** lease-for-task.ts UnjustifiedWhy: lapsed, ended (finished or in review) or not_held. */
  why: UnjustifiedWhy;
}

/**
 * The leases of `leases`, in their order, that are live by `ctx.now` (no grace: a lease past its
 * expiry is already free and the next lease write sweeps it) and serve a task (`stored`: as
 * stored) that would not justify them (lease-for-task.ts, the rule `lease --task` refuses by): its
 * holder, settled by `ctx`, is not the lease's agent. A lease for a task not here is left alone: a
 * lease may arrive by sync before its task.
 */
export function outlivedLeases(leases: readonly Lease[], stored: (id: string) => Task | undefined, ctx: OpContext): OutlivedLease[] {
  const tasks = new Map<string, Task | null>();
  const out: OutlivedLease[] = [];
  for (const lease of leases) {
    if (!lease.task || !isLeaseLive(lease, ctx.now)) continue;
    let was = tasks.get(lease.task);
    if (was === undefined) tasks.set(lease.task, (was = stored(lease.task) ?? null));
    if (!was) continue;
    const unjustified = unjustifiedTaskLease(was, lease.agent, ctx);
    if (unjustified) out.push({ lease, was, ...unjustified });
  }
  return out;
}
