// Refs refused on receive become an event on the caller's catch log, so `stats` and `events` count them.
import { catchEvent, recordCatches } from "../store/catch-log.ts";
import type { Store } from "../store/store.ts";
import type { Quarantined } from "./quarantine.ts";

export async function recordRefusedOnReceive(store: Store, remote: string, refused: Quarantined[]): Promise<void> {
  const invalid = refused.filter((q) => q.kind === "invalid");
  if (!invalid.length) return;
  await recordCatches(
    store,
    invalid.map((q) => catchEvent(store, "received_invalid", { reason: `${q.ref} from ${remote}: ${q.reason}`.slice(0, 2000), commit: q.oid })),
  );
}
