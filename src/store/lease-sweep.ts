// `doctor --repair`'s sweep of task leases that outlived their work: a lease for a task its holder
// does not hold (finished, in review, released, or held by another agent), as a process killed
// between the two renames of a task's transaction could leave one before the renames were ordered
// (task-lease-store.ts refOrder), or a build without that order still can. Each such task's
// leases are made to agree with it by the same operation every task transaction runs
// (followTask), logged as `unleased` on the lease ref; each task read is verified unchanged in the
// same transaction, so a claim landing meanwhile is never undone.
import type { Lease } from "../core/lease.ts";
import { isLeaseLive } from "../core/lease.ts";
import { followTask } from "../core/task-leases.ts";
import type { RefUpdate } from "../git/refs.ts";
import { leaseUpdate, loadLeases } from "./lease-store.ts";
import type { Store } from "./store.ts";
import { chainLeaseOps } from "../core/lease-ops.ts";
import { loadTask, taskRef } from "./task-store.ts";

/** Removes live task leases whose task (still stored) is not held by the lease's agent; returns them. */
export async function sweepOrphanTaskLeases(store: Store): Promise<Lease[]> {
  return store.casLoop(async (now) => {
    const { set, tip } = await loadLeases(store);
    const ids = [...new Set(set.leases.filter((l) => l.task && isLeaseLive(l, now)).map((l) => l.task!))];
    const updates: RefUpdate[] = [];
    const ops: Parameters<typeof chainLeaseOps>[2] = [];
    const orphans: Lease[] = [];
    for (const id of ids) {
      const found = await loadTask(store, id).catch(() => null);
      if (!found) continue;
      const { task } = found;
      const mine = (l: Lease) => task.status === "claimed" && task.claim?.agent === l.agent;
      const gone = set.leases.filter((l) => l.task === id && isLeaseLive(l, now) && !mine(l));
      if (!gone.length) continue;
      orphans.push(...gone);
      updates.push({ ref: taskRef(id), new: found.tip, old: found.tip });
      ops.push((s, c) => followTask(s, task, c));
    }
    if (!ops.length) return { updates: [], result: [] };
    const lu = leaseUpdate(store, tip, chainLeaseOps(set, await store.writeContext(now), ops));
    return lu ? { updates: [lu, ...updates], result: orphans } : { updates: [], result: [] };
  });
}
