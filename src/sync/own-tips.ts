// The commits a fetch offers the remote as haves (see fetchHandoffRefs): split out of tracking.ts,
// since both the refresh and a waiter's fetch of one task offer the same.
import type { Store } from "../store/store.ts";
import type { Tips } from "./tracking.ts";

/**
 * The commits worth offering when fetching `refs` (see fetchHandoffRefs): their earlier tracking
 * tips and their local tips, which what is fetched descends from.
 */
export async function ownTips(store: Store, refs: string[], tracked: Tips): Promise<string[]> {
  const tips: string[] = [];
  for (const ref of refs) {
    const was = tracked.get(ref);
    if (was) tips.push(was);
    const here = await store.readRef(ref);
    if (here) tips.push(here);
  }
  return tips;
}
