// The views (status, events, stats) read every ref under refs/handoff/ on each run. A loose ref is
// one file to open and read, packed refs are one file for all: at 1,000 tasks the loose files were
// a fifth of a view's time. Writes leave loose refs behind, so once enough have piled up a view
// packs them after it has printed, as sync does (pack-refs.ts): the next views read one file, and
// at most PACK_LOOSE_AT loose refs are read between packs. `git pack-refs --all` is what `git gc`
// does; it is safe beside concurrent writers (git locks packed-refs and keeps any ref that moved).
import { packIfLoose } from "../sync/pack-refs.ts";
import type { Store } from "../store/store.ts";

/** Packs the clone's refs when enough loose handoff refs piled up; never fails the view. */
export async function packAfterView(store: Store): Promise<void> {
  try {
    await packIfLoose(store);
  } catch {
    /* packing only speeds up the next view */
  }
}
