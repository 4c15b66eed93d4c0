// Which remote the tracking refs describe. refs/handoff-remotes/<remote>/* say what the remote had
// when last asked, and sync reads a ref the remote no longer has, but had then, as one compacted or
// deleted there: it removes the local copy (integrate.ts). That holds only while the tracking refs
// are of the same place. A clone pointed elsewhere (`git remote set-url` to a new host, `git handoff
// remote <name> --ref-prefix ...`) saw every ref the new place lacked as deleted, and its first sync
// emptied it: every task, claim and lease of the clone gone, "archived elsewhere".
//
// So the place the tracking refs were made for (the remote's URL, hashed, and the prefix its
// refs/handoff/* live under) is kept beside them in .git/handoff/tracking-<remote>. Where it is not
// the place configured now, the tracking refs go, with what the old place's copies were refused
// for (the quarantine): the clone then knows nothing of the remote, so a ref the remote lacks is
// pushed, never removed, and the next refresh learns the new place from scratch. A clone whose
// tracking refs predate the file keeps them (the place they were made for is not known; nothing
// changes for it) and the file is written.
import { fnv1a32 } from "../core/fnv.ts";
import { configFileStamp, configGet } from "../git/config.ts";
import { listRefs, updateRefs, type RefUpdate } from "../git/refs.ts";
import { remotePrefix } from "../git/ref-prefix.ts";
import { configuredRemote } from "../git/configured-remote.ts";
import { trackingPrefix } from "../git/tracking-ref.ts";
import { readSmallFile, writeSmallFile } from "../store/small-file.ts";
import type { Store } from "../store/store.ts";
import { quarantineRef } from "./quarantine.ts";
import { trace } from "./trace.ts";

const HEADER = "handoff-tracking 1";

/** The config stamp each clone and remote was last checked at: a running process checks again only after .git/config changes. */
const checked = new Map<string, string>();
const checkedKey = (store: Store, remote: string) => `${store.repo.commonDir}\0${remote}`;

function trackingPlacePath(store: Store, remote: string): string {
  return `${store.repo.commonDir}/handoff/tracking-${encodeURIComponent(remote)}`;
}

/** The remote's place as the file holds it: its URL hashed (a URL may carry a credential), and its prefix. */
async function placeNow(store: Store, remote: string): Promise<string> {
  const configured = await configuredRemote(store.cwd, store.repo.commonDir, store.configRead());
  const url = configured.name === remote ? configured.url : await configGet(store.cwd, `remote.${remote}.url`);
  return `${HEADER}\nurl ${fnv1a32(url ?? "").toString(16).padStart(8, "0")}\nprefix ${await remotePrefix(store.cwd, remote)}\n`;
}

/**
 * Forgets what the tracking refs say of `remote` when they were made for another place than the
 * one configured now (see above); true when it did. Call before a refresh reads them.
 */
export async function forgetMovedRemote(store: Store, remote: string): Promise<boolean> {
  const key = checkedKey(store, remote);
  const stamp = configFileStamp(store.repo.commonDir);
  if (checked.get(key) === stamp) return false;
  const path = trackingPlacePath(store, remote);
  const was = readSmallFile(path);
  const now = await placeNow(store, remote);
  let forgot = false;
  if (was !== now) {
    // No file (and a file that is not ours) with tracking refs already there: made by an older
    // git-handoff for the place configured now, as far as anything tells; they stay.
    if (was !== null && was.startsWith(`${HEADER}\n`)) forgot = await dropTracking(store, remote);
    writeSmallFile(path, now);
  }
  checked.set(key, stamp);
  return forgot;
}

/**
 * `git handoff remote <name> --ref-prefix`, after the setting changed: the tracking refs were of
 * the old place whatever the file says (an older git-handoff wrote none).
 */
export async function forgetTracking(store: Store, remote: string): Promise<void> {
  await dropTracking(store, remote);
  writeSmallFile(trackingPlacePath(store, remote), await placeNow(store, remote));
  checked.set(checkedKey(store, remote), configFileStamp(store.repo.commonDir));
}

/** Removes the tracking refs of `remote` and its quarantine, each only if it still holds what was read. */
async function dropTracking(store: Store, remote: string): Promise<boolean> {
  const tracked = await listRefs(store.storeCwd, trackingPrefix(remote));
  const quarantine = quarantineRef(remote);
  const held = (await listRefs(store.storeCwd, quarantine)).filter((t) => t.name === quarantine);
  const updates: RefUpdate[] = [...tracked, ...held].map((t) => ({ ref: t.name, new: null, old: t.oid }));
  if (!updates.length) return false;
  trace(`tracking: ${remote} points elsewhere now; forgetting ${tracked.length} tracking refs`);
  // A fetch that moved one meanwhile was a fetch from the new place: what it wrote is right.
  const r = await updateRefs(store.storeCwd, updates, store.zeroOid);
  if (!r.ok) for (const u of updates) await updateRefs(store.storeCwd, [u], store.zeroOid);
  return true;
}
