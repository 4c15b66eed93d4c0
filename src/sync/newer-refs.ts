// Refs the sync remote holds in a record format newer than this build reads, kept back unread
// (quarantine.ts, kind "newer"). This clone's copy of such a ref may be stale: reads that answer
// from it say so, and nothing is written to it here, as a write to it could never be sent.
import type { NewerRef, Store } from "../store/store.ts";
import { QUARANTINE_PREFIX, readQuarantine, type Quarantined } from "./quarantine.ts";

/** The sync remote's refs held back as newer, by ref name; one read of the quarantine folder, and no turn of the event loop, when there are none. */
export async function heldAsNewer(store: Store): Promise<Map<string, NewerRef>> {
  const any = store.anyRefUnder(QUARANTINE_PREFIX);
  if (any === false || (any === null && !(await store.listRefs(QUARANTINE_PREFIX)).length)) return new Map();
  const remote = await store.syncRemote();
  if (!remote) return new Map();
  return newerIn((await readQuarantine(store, remote)).entries.values(), remote);
}

/** The entries of `remote`'s quarantine held back as newer, by ref name: for a caller that read the quarantine for all it holds (status). */
export function newerIn(entries: Iterable<Quarantined>, remote: string): Map<string, NewerRef> {
  const held = new Map<string, NewerRef>();
  for (const q of entries) if (q.kind === "newer") held.set(q.ref, { ref: q.ref, remote, reason: q.reason });
  return held;
}

