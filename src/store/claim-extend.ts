// Claims stay alive while work goes on: a write by the holder that concerns a claimed task (a
// lease in its scope, an edit in its scope seen by a hook, a heartbeat) renews the claim once a
// third of its time has passed. Below that threshold nothing is written, so most edits cost no
// write; the claim's scope leases are extended in the same transaction (task-leases.ts).
import { HandoffError } from "../core/errors.ts";
import type { Lease } from "../core/lease.ts";
import { claimExtensionDue, dueTaskIds } from "../core/task-leases.ts";
import { renewTask } from "../core/task-ops.ts";
import type { Store } from "./store.ts";
import { mutateTaskFollowed } from "./task-lease-store.ts";
import { listTasks, loadTask } from "./task-store.ts";

/** Renews each of `ids` the caller holds whose extension is due; returns the ids renewed. Best effort. */
export async function extendDueClaims(store: Store, ids: string[]): Promise<string[]> {
  const agent = store.actor.agent;
  const renewed: string[] = [];
  for (const id of [...new Set(ids)]) {
    try {
      const { task } = await loadTask(store, id);
      if (!claimExtensionDue(task, agent, store.now())) continue;
      await mutateTaskFollowed(store, id, (t, ctx) => (claimExtensionDue(t, agent, ctx.now) ? renewTask(t, ctx) : { ok: true, record: t, steps: [] }));
      renewed.push(id);
    } catch (e) {
      // A race lost or a task gone meanwhile: the work itself must not fail because of it.
      if (!(e instanceof HandoffError)) throw e;
    }
  }
  return renewed;
}

/**
 * After the holder's write touching `covers`: extend the claims whose leases it touched. `covers`
 * spends a budget of matching; the due claims it could not tell are `unchecked`, left as they are.
 */
export async function extendClaimsCovering(store: Store, leases: Lease[], covers: (l: Lease) => boolean): Promise<{ renewed: string[]; unchecked: string[] }> {
  const { ids, unchecked } = dueTaskIds(leases, store.actor.agent, store.now(), covers);
  return { renewed: ids.length ? await extendDueClaims(store, ids) : [], unchecked };
}

/** The holder's heartbeat: every claim of the caller that is due. */
export async function extendAllDue(store: Store): Promise<string[]> {
  const { tasks } = await listTasks(store, { settled: false });
  return extendDueClaims(store, tasks.filter((t) => claimExtensionDue(t, store.actor.agent, store.now())).map((t) => t.id));
}
