// Where this clone's fetches of a remote take turns (withFetchLock's lock and its stamp of the
// last fetch that ended). Split out of tracking.ts: the refresh, the fetch-first look, the shared
// poll and doctor's lock check all name this folder, and need nothing else of the refresh.
import { lstatSync } from "node:fs";
import { join } from "node:path";
import type { Store } from "../store/store.ts";

export function fetchLockDir(store: Store): string {
  return `${store.repo.commonDir}/handoff`;
}

/** When a fetch of this clone last ended (the stamp withFetchLock leaves), epoch ms; 0 if never. */
export function lastFetchEnded(store: Store, remote: string): number {
  try {
    return lstatSync(join(fetchLockDir(store), `fetch-${remote}.done`)).mtimeMs;
  } catch {
    return 0;
  }
}
