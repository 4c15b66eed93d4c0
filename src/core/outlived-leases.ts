// Which task leases outlived their work: a lease in force by this clock that serves a task its
// holder no longer works on, the task settled as every view and write settles it (task-ops.ts
// settle). The one judgement behind doctor's lease check and doctor --repair's sweep
// (store/lease-sweep.ts): what one reports the other removes, what one keeps the other does not
// report. Settling is what they once disagreed on: a claim that ran out is stored as its holder's
// until a writer records the expiry, while every reader already treats it as free (another agent's
// only past the takeover grace, clock-skew.ts), so a lease its holder took for the task after it
// ran out was reported by the view and kept by the sweep, which read the stored claim.
import { isLeaseLive, type Lease } from "./lease.ts";
import { isFinal, type Task } from "./task.ts";
import { settle, type OpContext } from "./task-ops.ts";

/** A lease that outlived its work: its task as settled, and why. */
export interface OutlivedLease {
  lease: Lease;
  /** The lease's task, settled by the judging context. */
  task: Task;
  /** The task as stored (a lapsed claim is still in it). */
  was: Task;
  /**
   * lapsed: the task is stored as claimed by the lease's holder, but that claim ran out (for
   * another agent's view, past the grace too); ended: the task is finished or in review;
   * not_held: nobody holds it, or another agent does.
   */
  why: "lapsed" | "ended" | "not_held";
}

/**
 * The leases of `leases`, in their order, that are live by `ctx.now` (no grace: a lease past its
 * expiry is already free and the next lease write sweeps it) and serve a task (`stored`: as
 * stored) whose holder, settled by `ctx`, is not the lease's agent. A lease for a task not here is
 * left alone: a lease may arrive by sync before its task.
 */
export function outlivedLeases(leases: readonly Lease[], stored: (id: string) => Task | undefined, ctx: OpContext): OutlivedLease[] {
  const tasks = new Map<string, { was: Task; task: Task } | null>();
  const out: OutlivedLease[] = [];
  for (const lease of leases) {
    if (!lease.task || !isLeaseLive(lease, ctx.now)) continue;
    let found = tasks.get(lease.task);
    if (found === undefined) {
      const was = stored(lease.task);
      tasks.set(lease.task, (found = was ? { was, task: settle(was, ctx).record } : null));
    }
    if (!found) continue;
    const { was, task } = found;
    if (task.status === "claimed" && task.claim?.agent === lease.agent) continue;
    const why = was.status === "claimed" && was.claim?.agent === lease.agent ? "lapsed" : isFinal(task.status) || task.status === "review" ? "ended" : "not_held";
    out.push({ lease, task, was, why });
  }
  return out;
}
