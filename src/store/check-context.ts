// What a check of paths for the calling agent is judged by (core/check.ts): this clock, the
// policy, whether the lease set read may be stale, and the takeover grace a write of the lease set
// would honour. The grace comes from the write's own context (Store.writeContext), so `check`, the
// MCP tool and the hooks answer as the write that follows would decide: a file another agent's
// lease still stands on through the grace is never called free and then refused.
import type { CheckContext } from "../core/check.ts";
import { viewerOf, type Viewer } from "../core/clock-skew.ts";
import type { LeasePolicy } from "../core/lease-policy.ts";
import type { OpContext } from "../core/task-ops.ts";
import { loadPolicy } from "./lease-store.ts";
import { staleLeaseNote } from "./stale-leases.ts";
import type { Store } from "./store.ts";

/**
 * The check's context for the caller. `op`: the write context the caller goes on to write with
 * (the pre-edit hook's auto-lease or renewal), so both rest on one reading of the grace.
 */
export async function checkContext(store: Store, opts: { policy?: LeasePolicy; op?: OpContext } = {}): Promise<CheckContext> {
  const op = opts.op ?? (await store.writeContext(store.now()));
  const stale = await staleLeaseNote(store);
  return {
    agent: op.actor.agent,
    now: op.now,
    policy: opts.policy ?? loadPolicy(store),
    ...(op.takeoverGraceMs ? { takeoverGraceMs: op.takeoverGraceMs } : {}),
    ...(stale ? { stale } : {}),
  };
}

/**
 * The takeover grace the views (`leases`, `status`, the dashboard's leases, a claim's overlap
 * advisory, the session-start context) show other agents' leases and claims by: the write context's, as for a check, so a view
 * never drops a lease a write of its path would refuse. Sync's replay of this clone's own writes
 * (sync/integrate.ts) takes it too, as those writes would have. No network call: the estimate on file, or
 * the one an exclusive write of this process just made (Store.takeoverGrace).
 */
export async function viewGraceMs(store: Store): Promise<number> {
  return (await viewContext(store)).takeoverGraceMs ?? 0;
}

/** The caller as a viewer (core/clock-skew.ts Viewer): its agent, and viewGraceMs. */
export async function storeViewer(store: Store): Promise<Viewer> {
  return viewerOf(await viewContext(store));
}

/**
 * The context the task views (`task list`/`show`, `ready`, `status`, the dashboard, MCP's
 * list_tasks, get_task and overview) settle tasks by: the write context at `now`, so another
 * agent's claim inside the takeover grace shows as held while a claim of it is refused, and the
 * caller's own expired claim as free. Nothing about time or the grace is kept with a listing: every
 * read settles the stored records again (the listing files hold records as stored).
 */
export function viewContext(store: Store, now: Date = store.now()): Promise<OpContext> {
  return store.writeContext(now);
}
