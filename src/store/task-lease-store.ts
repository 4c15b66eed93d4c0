// A task change and the file leases it implies, in ONE compare-and-swap transaction over two refs:
// claiming a task leases its scope, releasing or finishing it releases them. Either both refs
// move or neither does, and a lost race re-runs both decisions on fresh state.
import { HandoffError, type Refusal } from "../core/errors.ts";
import type { LeaseSet } from "../core/lease.ts";
import type { Outcome } from "../core/outcome.ts";
import { isFinal, type Task } from "../core/task.ts";
import { settle, type OpContext } from "../core/task-ops.ts";
import { followTask } from "../core/task-leases.ts";
import { chainLeaseOps } from "../core/lease-ops.ts";
import type { RefUpdate } from "../git/refs.ts";
import { writeSteps } from "./codec.ts";
import { LEASES_REF, leaseUpdate, loadLeases } from "./lease-store.ts";
import type { CasOptions, Store } from "./store.ts";
import { loadTask, TASK_FILE, taskRef } from "./task-store.ts";

export type LeaseFollowUp = (set: LeaseSet, after: Task, ctx: OpContext) => Outcome<LeaseSet>;

export async function mutateTaskWithLeases(
  store: Store,
  id: string,
  op: (task: Task, ctx: OpContext) => Outcome<Task>,
  follow: LeaseFollowUp,
  opts: CasOptions = {},
): Promise<Task> {
  const ref = taskRef(id);
  const done = await store.casLoop<{ task: Task } | { refusal: Refusal }>(async (now) => {
    // One context for the task and its leases: both judge others' expiries with the takeover grace.
    const ctx = await store.writeContext(now);
    const { task, tip } = await loadTask(store, id);
    const out = op(task, ctx);
    if (!out.ok) {
      // As in mutateTask: a lease that ran out for the last allowed time fails the task, and every
      // later operation is refused, so this writer records the expiry and the failure first.
      const settled = settle(task, ctx);
      if (settled.steps.length === 0 || !isFinal(settled.record.status)) throw new HandoffError(out.refusal);
      const leases = await loadLeases(store);
      const updates: RefUpdate[] = [{ ref, new: writeSteps(store, tip, TASK_FILE, settled.steps), old: tip }];
      const lu = leaseUpdate(store, leases.tip, followTask(leases.set, settled.record, ctx));
      if (lu) updates.push(lu);
      return { updates: refOrder(updates, settled.record), result: { refusal: out.refusal } };
    }
    const leases = await loadLeases(store);
    // Whatever the operation, the task's leases then agree with it (task-leases.ts).
    const leaseOut = chainLeaseOps(leases.set, ctx, [(s, c) => follow(s, out.record, c), (s, c) => followTask(s, out.record, c)]);
    const updates: RefUpdate[] = [];
    if (out.steps.length) updates.push({ ref, new: writeSteps(store, tip, TASK_FILE, out.steps), old: tip });
    const lu = leaseUpdate(store, leases.tip, leaseOut);
    if (lu) updates.push(lu);
    return { updates: refOrder(updates, out.record), result: { task: out.record } };
  }, opts);
  if ("refusal" in done) throw new HandoffError(done.refusal);
  return done.task;
}

/**
 * The order in which a task's ref and the lease ref are set. Both move in one transaction, but the
 * refs are renamed into place one by one (loose-ref-writer.ts, git's update-ref alike), so a crash
 * between the two leaves the first set alone. Whichever it is must keep "a task lease exists only
 * while its task is held by that agent": a task left held without its lease is put right by the
 * holder's next renewal, a lease left without its task would turn others away for its whole TTL.
 * So a task that ends up held goes first (claim, renew: the leases it implies follow), and one
 * that no longer is goes last (done, release, fail, cancel, reclaim, review: its leases end first).
 */
export function refOrder(updates: RefUpdate[], after: Task): RefUpdate[] {
  return after.status === "claimed" ? updates : leasesFirst(updates);
}

/** The lease ref's update first: for transactions that end tasks' claims (refOrder). */
export function leasesFirst(updates: RefUpdate[]): RefUpdate[] {
  return [...updates.filter((u) => u.ref === LEASES_REF), ...updates.filter((u) => u.ref !== LEASES_REF)];
}

/** A task operation whose only lease consequence is that the task's leases follow the task. */
export function mutateTaskFollowed(store: Store, id: string, op: (task: Task, ctx: OpContext) => Outcome<Task>, opts: CasOptions = {}): Promise<Task> {
  return mutateTaskWithLeases(store, id, op, (set) => ({ ok: true, record: set, steps: [] }), opts);
}

