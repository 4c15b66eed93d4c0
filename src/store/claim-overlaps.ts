// After a claim: which other live work its scope meets (core/claim-overlap.ts), logged on the
// claimer's catch log so `stats` counts it. Advisory only: a problem here never fails the claim.
import { claimOverlaps, type Overlap } from "../core/claim-overlap.ts";
import type { Task } from "../core/task.ts";
import { catchEvent, recordCatches } from "./catch-log.ts";
import { loadLeases } from "./lease-store.ts";
import type { Store } from "./store.ts";
import { listClaimedTasks } from "./task-listing.ts";

/** At most this many overlaps are logged per claim (all are reported). */
const MAX_LOGGED = 20;

export async function overlapsOfClaim(store: Store, claimed: Task): Promise<Overlap[]> {
  if (!claimed.scope.length) return [];
  // Only claimed tasks can overlap a claim: the rest of the listing is not settled for it.
  const [tasks, { set }] = await Promise.all([listClaimedTasks(store), loadLeases(store)]);
  const found = claimOverlaps(claimed, tasks, set.leases, store.actor.agent, store.now());
  await recordCatches(
    store,
    found.slice(0, MAX_LOGGED).map((o) =>
      catchEvent(store, "claim_overlap", { task: claimed.id, code: o.verdict, holder: o.agent, paths: [o.pattern, o.scope], ...(o.task ? { on: o.task } : {}) }),
    ),
  );
  return found;
}
