// The tracking refs (refs/handoff-remotes/<remote>/*): what the remote had when last asked.
// Read here: all of them, those of some families, a few by name, and all three sets sync starts
// from. Bringing them up to date is refresh-tracking.ts (and fetch-first.ts), what came is judged
// in screen-received.ts.
import { listRefs, type RefTip } from "../git/refs.ts";
import { inFamilies } from "../git/remote-ref.ts";
import { git } from "../git/run.ts";
import { trackingPrefix, trackingRef } from "../git/tracking-ref.ts";
import { REF_ROOT, type Store } from "../store/store.ts";

export type Tips = Map<string, string>;

/** Up to this many tracking refs are read in-process (no git spawn). */
const IN_PROCESS_READS = 32;

/** The remote's refs as last fetched, keyed by their refs/handoff/* name. */
export async function trackingTips(store: Store, remote: string): Promise<Tips> {
  const prefix = trackingPrefix(remote);
  return tipsOf(await refsUnder(store, prefix), trackingMaps, (name) => REF_ROOT + name.slice(prefix.length));
}

/**
 * A listing as a map, made once per listing array: a running process's listing of unchanged refs
 * is the very same array (RefFiles.listFollowed), and at 5,000 tasks the two maps a sync starts
 * from took 4 ms to build. Callers only read these maps (copies are made to change them).
 */
function tipsOf(list: readonly RefTip[], maps: WeakMap<readonly RefTip[], Tips>, name: (ref: string) => string = (ref) => ref): Tips {
  let m = maps.get(list);
  if (!m) {
    m = new Map();
    for (const t of list) m.set(name(t.name), t.oid);
    maps.set(list, m);
  }
  return m;
}

const trackingMaps = new WeakMap<readonly RefTip[], Tips>();
const localMaps = new WeakMap<readonly RefTip[], Tips>();

/** Refs under `prefix`: read in-process when this clone keeps refs in files (no git spawn), else one `for-each-ref`. */
function refsUnder(store: Store, prefix: string): Promise<{ name: string; oid: string }[]> {
  return store.usesRefFiles ? store.listRefs(prefix) : listRefs(store.storeCwd, prefix);
}

/** The remote's refs of some families as last fetched (one `for-each-ref` of just those). */
export async function trackingTipsOf(store: Store, remote: string, families: string[]): Promise<Tips> {
  const prefix = trackingPrefix(remote);
  const out: Tips = new Map();
  if (store.usesRefFiles) {
    for (const f of families) {
      if (f.endsWith("/")) for (const t of await store.listRefs(trackingRef(remote, f))) out.set(REF_ROOT + t.name.slice(prefix.length), t.oid);
      else {
        const oid = await store.readRef(trackingRef(remote, f));
        if (oid) out.set(f, oid);
      }
    }
    return out;
  }
  const r = await git(["for-each-ref", "--format=%(objectname) %(refname)", ...families.map((f) => trackingRef(remote, f))], { cwd: store.storeCwd });
  for (const line of r.stdout.split("\n")) {
    const sp = line.indexOf(" ");
    if (sp < 0) continue;
    const ref = REF_ROOT + line.slice(sp + 1 + prefix.length);
    if (inFamilies(ref, families)) out.set(ref, line.slice(0, sp));
  }
  return out;
}

/** Tracking values of just these refs (one `for-each-ref` with exact names). */
export async function trackingFor(store: Store, remote: string, refs: string[]): Promise<Tips> {
  const out: Tips = new Map();
  if (!refs.length) return out;
  if (store.usesRefFiles && refs.length <= IN_PROCESS_READS) {
    // A claim or a poll asks about a ref or two: read the files instead of spawning git.
    for (const ref of refs) {
      const oid = await store.readRef(trackingRef(remote, ref));
      if (oid) out.set(ref, oid);
    }
    return out;
  }
  const r = await git(["for-each-ref", "--format=%(objectname) %(refname)", ...refs.map((x) => trackingRef(remote, x))], { cwd: store.storeCwd });
  const prefix = trackingPrefix(remote);
  for (const line of r.stdout.split("\n")) {
    const sp = line.indexOf(" ");
    if (sp > 0) out.set(REF_ROOT + line.slice(sp + 1 + prefix.length), line.slice(0, sp));
  }
  return out;
}

/**
 * Tracking values of the refs a fetch of the patterns `<ref>*` brings: each ref itself and any
 * other ref of its folder whose name starts with it (task t-1's pattern also matches t-12).
 * Those must be judged like the rest: a tracking ref that moved unseen would later integrate
 * without validation.
 */
export async function trackingMatching(store: Store, remote: string, refs: string[]): Promise<Tips> {
  const out: Tips = new Map();
  const folders = new Set(refs.map((r) => r.slice(0, r.lastIndexOf("/") + 1)));
  for (const folder of folders) {
    const mine = refs.filter((r) => r.startsWith(folder));
    for (const [ref, oid] of await trackingTipsOf(store, remote, [folder])) if (mine.some((r) => ref.startsWith(r))) out.set(ref, oid);
  }
  return out;
}

/** Local, tracking and tentative-marker refs in one listing (sync needs all three). */
export async function snapshot(store: Store, remote: string): Promise<{ local: Tips; tracking: Tips; tentative: number }> {
  const prefix = trackingPrefix(remote);
  if (store.usesRefFiles) {
    // Read in-process: at thousands of tasks this listing is the largest local cost of a sync.
    const [local, tracking, tentative] = await Promise.all([refsUnder(store, REF_ROOT), trackingTips(store, remote), refsUnder(store, "refs/handoff-local/tentative/")]);
    return { local: tipsOf(local, localMaps), tracking, tentative: tentative.length };
  }
  const r = await git(["for-each-ref", "--format=%(objectname) %(refname)", REF_ROOT, prefix, "refs/handoff-local/tentative/"], { cwd: store.storeCwd });
  const local: Tips = new Map();
  const tracking: Tips = new Map();
  let tentative = 0;
  for (const line of r.stdout.split("\n")) {
    const sp = line.indexOf(" ");
    if (sp < 0) continue;
    const name = line.slice(sp + 1);
    if (name.startsWith(REF_ROOT)) local.set(name, line.slice(0, sp));
    else if (name.startsWith(prefix)) tracking.set(REF_ROOT + name.slice(prefix.length), line.slice(0, sp));
    else tentative++;
  }
  return { local, tracking, tentative };
}
