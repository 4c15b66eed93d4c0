// Sync health for the dashboard: which remote, when this clone last fetched, refs held back from
// the remote (quarantined), offline operations not yet confirmed, conflicts, clock skew.
import { statSync } from "node:fs";
import type { Conflict } from "../sync/local-area.ts";
import { listTentative, readConflicts } from "../sync/local-area.ts";
import { isAncestor, readCommit } from "../store/history.ts";
import { REF_ROOT, type Store } from "../store/store.ts";
import { readQuarantine } from "../sync/quarantine.ts";
import { repairAdvice, type RepairAdvice } from "../sync/repair-hazard.ts";

export interface SyncHealth {
  remote: string | null;
  /** When the tracking refs last changed (any process of this clone), or null. */
  last_fetch: string | null;
  /** When this dashboard's own `--sync` fetch last succeeded / failed. */
  last_sync: { at: string; ok: boolean; message: string | null } | null;
  /** Refs the remote has that were not applied here: the remote's value is not in our history. */
  quarantined: { ref: string; remote: string; local: string | null; reason?: string; repair?: RepairAdvice }[];
  tentative: { ref: string; commit: string; type: string | null; at: string | null }[];
  conflicts: Conflict[];
  /** How far the newest fetched remote event lies in this machine's future (ms), when positive. */
  clock_skew_ms: number | null;
}

const TRACKING_ROOT = "refs/handoff-remotes/";

export async function syncHealth(store: Store, lastSync: SyncHealth["last_sync"]): Promise<SyncHealth> {
  const remote = await store.syncRemote().catch(() => null);
  const tentative = (await listTentative(store)).map((t) => ({ ref: t.ref, commit: t.commit, type: t.event?.type ?? null, at: t.event?.at ?? null }));
  const conflicts = await readConflicts(store);
  const out: SyncHealth = { remote, last_fetch: null, last_sync: lastSync, quarantined: [], tentative, conflicts, clock_skew_ms: null };
  if (!remote) return out;
  const prefix = `${TRACKING_ROOT}${remote}/`;
  try {
    out.last_fetch = statSync(`${store.repo.storeDir}/${prefix}`).mtime.toISOString();
  } catch {
    out.last_fetch = null;
  }
  const local = new Map((await store.listRefs(REF_ROOT)).map((t) => [t.name, t.oid]));
  let newest = 0;
  for (const t of await store.listRefs(prefix)) {
    const ref = REF_ROOT + t.name.slice(prefix.length);
    const mine = local.get(ref) ?? null;
    try {
      newest = Math.max(newest, (await readCommit(store, t.oid, t.name)).time * 1000);
      if (mine !== t.oid && !(mine && (await isAncestor(store, t.oid, mine, ref)))) out.quarantined.push({ ref, remote: t.oid, local: mine });
    } catch {
      out.quarantined.push({ ref, remote: t.oid, local: mine });
    }
  }
  if (newest) out.clock_skew_ms = Math.max(0, newest - store.now().getTime());
  // Refs validation refused on receive (the sync layer's quarantine list), with its reason and
  // what repairs it, in the words sync and status use (repair-hazard.ts).
  const refused = [...((await readQuarantine(store, remote).catch(() => null))?.entries.values() ?? [])];
  const advice = await repairAdvice(store, refused).catch(() => new Map<string, RepairAdvice>());
  for (const q of refused) {
    const repair = advice.get(q.ref);
    const shown = out.quarantined.find((x) => x.ref === q.ref);
    if (shown) Object.assign(shown, { reason: q.reason }, repair ? { repair } : {});
    else out.quarantined.push({ ref: q.ref, remote: q.oid, local: local.get(q.ref) ?? null, reason: q.reason, ...(repair ? { repair } : {}) });
  }
  return out;
}
