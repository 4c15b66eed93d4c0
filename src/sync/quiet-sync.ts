// A sync with nothing new, known without reading this clone's refs. A sync that found nothing to
// do (nothing fetched, pushed, replayed, removed, refused, archived or packed; no offline grants)
// leaves what it went by: the remote's listing as git printed it, and a stamp of the refs a sync
// reads here (every loose file's value, packed-refs' identity). What a sync does is a function of
// those refs and that listing, plus the clock for the archive: the next sync that finds the same
// two, before the first finished task comes due, has nothing to do either. At 5,000 tasks this
// skips reading 10,000 packed refs and comparing them (about 30 ms of a one-shot sync's 120).
// A listing read from a remote on this disk leaves the stamp of the remote's ref files too, and
// the next listing is the remembered one while that stamp holds (path-remote.ts listPath).
import { unlinkSync } from "node:fs";
import { readTextNoFollow, replaceFile } from "../git/safe-file.ts";
import { trackingPrefix } from "../git/tracking-ref.ts";
import { compactionDue } from "../store/archive.ts";
import { LOCAL_ROOT } from "./local-area.ts";
import { REF_ROOT, type Store } from "../store/store.ts";
import type { Listing } from "./refresh-tracking.ts";

const FORMAT = 1;

export interface Quiet {
  stamp: string;
  prefix: string;
  retention: number;
  /** When the first finished task comes due for the archive (epoch ms), null if none is finished. */
  due: number | null;
  listing: string;
  /** The stamp of the remote's ref files the listing was read from (a remote on this disk), if any. */
  remoteStamp?: string;
}

/** The refs a sync reads (local, tracking, this clone's own), stamped; null where refs are not files. */
export function syncStamp(store: Store, remote: string): string | null {
  return store.refStamp([REF_ROOT, trackingPrefix(remote), LOCAL_ROOT]);
}

const pathOf = (store: Store, remote: string) => `${store.repo.commonDir}/handoff/sync-${remote}.quiet`;

/** What the last sync that found nothing to do went by; null if none, or a file not ours. */
export function readQuiet(store: Store, remote: string): Quiet | null {
  const text = readTextNoFollow(pathOf(store, remote));
  if (text === null) return null;
  const nl = text.indexOf("\n");
  if (nl < 0) return null;
  try {
    const head = JSON.parse(text.slice(0, nl)) as Partial<Omit<Quiet, "remoteStamp">> & { format?: unknown; remote_stamp?: unknown };
    if (head.format !== FORMAT || typeof head.stamp !== "string" || typeof head.prefix !== "string" || typeof head.retention !== "number") return null;
    if (head.due !== null && typeof head.due !== "number") return null;
    const remoteStamp = typeof head.remote_stamp === "string" ? { remoteStamp: head.remote_stamp } : {};
    return { stamp: head.stamp, prefix: head.prefix, retention: head.retention, due: head.due, listing: text.slice(nl + 1), ...remoteStamp };
  } catch {
    return null;
  }
}

/** Whether a sync now, with these refs and this listing, would find what the quiet one found: nothing. */
export function stillQuiet(store: Store, q: Quiet, stamp: string, listing: Listing): boolean {
  return (
    q.stamp === stamp &&
    q.prefix === listing.prefix &&
    q.retention === store.config.retentionMs &&
    (q.due === null || store.now().getTime() < q.due) &&
    q.listing === listing.raw
  );
}

/** Called by a sync that found nothing to do, with the stamp taken before it read anything. */
export function rememberQuiet(store: Store, remote: string, stamp: string, listing: Listing): void {
  const due = compactionDue(store);
  if (due === undefined) return;
  writeQuiet(store, remote, { stamp, prefix: listing.prefix, retention: store.config.retentionMs, due, listing: listing.raw, ...(listing.stamp !== undefined ? { remoteStamp: listing.stamp } : {}) });
}

/**
 * Called by a sync with nothing new whose listing was read again because the remote's ref files
 * changed without changing it (their owner packed them, say): the record takes the files' new
 * stamp, or every later sync would read the listing too. Kept only while this clone's refs are
 * still what the record says (a sync that moved them meanwhile left its own record, or none).
 */
export function restampQuiet(store: Store, remote: string, q: Quiet, remoteStamp: string | undefined): void {
  if (remoteStamp === q.remoteStamp || syncStamp(store, remote) !== q.stamp) return;
  const { remoteStamp: _, ...rest } = q;
  writeQuiet(store, remote, { ...rest, ...(remoteStamp !== undefined ? { remoteStamp } : {}) });
}

/** The record as readQuiet reads it: its head line, then the listing. Best effort. */
function writeQuiet(store: Store, remote: string, q: Quiet): void {
  const head = { format: FORMAT, stamp: q.stamp, prefix: q.prefix, retention: q.retention, due: q.due, ...(q.remoteStamp !== undefined ? { remote_stamp: q.remoteStamp } : {}) };
  try {
    replaceFile(pathOf(store, remote), `${JSON.stringify(head)}\n${q.listing}`);
  } catch {
    /* the next sync reads the refs and the listing instead */
  }
}

/** Called by a sync that changed something: what the last quiet one saw is past. */
export function forgetQuiet(store: Store, remote: string): void {
  try {
    unlinkSync(pathOf(store, remote));
  } catch {
    /* none */
  }
}
