// Whether this clone's lease set may be stale: the sync remote's is from a newer git-handoff and is
// kept unread (sync/newer-refs.ts). A check answered from the local copy could then call a file
// free that another agent holds exclusively, so checks, hooks and `leases` say so instead.
import { LEASES_REF } from "./lease-store.ts";
import type { Store } from "./store.ts";

/** One line saying why the lease set read here may be stale, or undefined when it is not. */
export async function staleLeaseNote(store: Store): Promise<string | undefined> {
  const q = (await store.heldAsNewer()).get(LEASES_REF);
  return q && `the lease set on ${q.remote} is from a newer git-handoff (${q.reason}); upgrade git-handoff (what this clone holds of it may be stale)`;
}
