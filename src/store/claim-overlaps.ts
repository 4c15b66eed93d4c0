// After a claim: which other live work its scope meets (core/claim-overlap.ts), logged on the
// claimer's catch log so `stats` counts it. Advisory only: a problem here never fails the claim.
import { claimOverlaps, type Overlap } from "../core/claim-overlap.ts";
import type { ClaimedTask } from "../core/capacity.ts";
import type { Task } from "../core/task.ts";
import { catchEvent, recordCatches } from "./catch-log.ts";
import { viewGraceMs } from "./check-context.ts";
import { loadLeases } from "./lease-store.ts";
import type { Store } from "./store.ts";
import { storedClaimedTasks } from "./task-listing.ts";

/** At most this many overlaps are logged per claim (all are reported). */
const MAX_LOGGED = 20;

/**
 * `before`: the claimed tasks the claim's capacity check read just before it. They serve here as
 * well (the claim itself is left out below): another agent's claim landing in between is no more
 * likely caught by a second read a moment later, which cost a listing on every claim's answer.
 */
export async function overlapsOfClaim(store: Store, claimed: Task, before?: readonly ClaimedTask[], o: { log?: boolean } = {}): Promise<Overlap[]> {
  if (!claimed.scope.length) return [];
  // Only claimed tasks can overlap a claim: the rest of the listing is not looked at, and these
  // need no settling (claimOverlaps skips an expired claim itself).
  const [tasks, { set }, grace] = await Promise.all([before ?? storedClaimedTasks(store), loadLeases(store), viewGraceMs(store)]);
  // Other agents' work inside the takeover grace is near too: a lease of its path would be refused.
  const found = claimOverlaps(claimed, tasks, set.leases, store.actor.agent, store.now(), grace);
  if (o.log === false) return found;
  await recordCatches(
    store,
    found.slice(0, MAX_LOGGED).map((o) =>
      catchEvent(store, "claim_overlap", { task: claimed.id, code: o.verdict, holder: o.agent, paths: [o.pattern, o.scope], ...(o.task ? { on: o.task } : {}) }),
    ),
  );
  return found;
}
