// `doctor --repair`'s sweep of task leases that outlived their work (core/outlived-leases.ts, the
// judgement doctor's check reports by): a lease for a task its holder does not hold as the task is
// settled (finished, in review, released, held by another agent, or a claim of the holder's that
// ran out and, through a sync remote, past the takeover grace), as a process killed between the two
// renames of a task's transaction could leave one before the renames were ordered
// (task-lease-store.ts refOrder), a build without that order still can, or an agent leasing for
// its task after its own claim ran out. Each task's such leases end in one `unleased` step, as a
// task transaction ends them (task-leases.ts endTaskLeases); each task read is verified unchanged
// in the same transaction, so a claim landing meanwhile is never undone. No task is written: a
// claim that ran out stays as stored, for the next writer of the task to record its expiry.
import { isLeaseLive, type Lease } from "../core/lease.ts";
import { outlivedLeases } from "../core/outlived-leases.ts";
import { endTaskLeases } from "../core/task-leases.ts";
import type { Task } from "../core/task.ts";
import { groupBy } from "../core/group-by.ts";
import type { RefUpdate } from "../git/refs.ts";
import { leaseUpdate, loadLeases } from "./lease-store.ts";
import type { Store } from "./store.ts";
import { chainLeaseOps } from "../core/lease-ops.ts";
import { loadTask, taskRef } from "./task-store.ts";

/** Removes the live task leases that outlived their work (outlivedLeases, by the write context); returns them. */
export async function sweepOrphanTaskLeases(store: Store): Promise<Lease[]> {
  return store.casLoop(async (now) => {
    const ctx = await store.writeContext(now);
    const { set, tip } = await loadLeases(store);
    const ids = [...new Set(set.leases.filter((l) => l.task && isLeaseLive(l, now)).map((l) => l.task!))];
    const found = new Map<string, { task: Task; tip: string }>();
    for (const id of ids) {
      const read = await loadTask(store, id).catch(() => null);
      if (read) found.set(id, read);
    }
    const orphans = outlivedLeases(set.leases, (id) => found.get(id)?.task, ctx).map((o) => o.lease);
    if (!orphans.length) return { updates: [], result: [] };
    const byTask = groupBy(orphans, (l) => l.task!);
    const updates: RefUpdate[] = [...byTask.keys()].map((id) => ({ ref: taskRef(id), new: found.get(id)!.tip, old: found.get(id)!.tip }));
    const lu = leaseUpdate(store, tip, chainLeaseOps(set, ctx, [...byTask].map(([id, gone]) => (s, c) => endTaskLeases(s, id, gone, c))));
    return lu ? { updates: [lu, ...updates], result: orphans } : { updates: [], result: [] };
  });
}
