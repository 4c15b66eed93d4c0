// The tracking refs (refs/handoff-remotes/<remote>/*): what the remote had when last asked.
// Refreshing asks the remote for its list first and fetches only refs whose value changed, so
// with nothing new a refresh costs one ref advertisement.
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { listRefs, updateRefs, type RefTip } from "../git/refs.ts";
import { fetchHandoffRefs, type FetchResult } from "../git/fetch-refs.ts";
import { lsRemoteHandoff } from "../git/remote-listing.ts";
import { trackingPrefix, trackingRef } from "../git/tracking-ref.ts";
import { withFetchLock } from "../git/fetch-lock.ts";
import type { RemoteFailure } from "../git/remote-failure.ts";
import { fetchesInProcess, fetchNamed } from "./named-fetch.ts";
import { callTimeout, remoteBudget, type RemoteBudget } from "./remote-budget.ts";
import { failOnStaleLock } from "../store/stale-lock.ts";
import { git } from "../git/run.ts";
import { inFamilies } from "../git/remote-ref.ts";
import { REF_ROOT, type Store } from "../store/store.ts";
import { readQuarantine, writeQuarantine, type Quarantined } from "./quarantine.ts";
import { sharesOperation, validateReceived, type Verdict } from "./validate-receive.ts";
import { recordSightings } from "./skew.ts";
import { trace } from "./trace.ts";

export type Tips = Map<string, string>;

/** Up to this many tracking refs are read in-process (no git spawn). */
const IN_PROCESS_READS = 32;

/** Above this many changed refs one glob fetch is cheaper than naming each. */
const NAMED_FETCH_LIMIT = 200;

/**
 * From a remote fetched in process (no glob fetch), this many refs a fetch: each part's pack is
 * kept as a pack (keep-pack.ts), so a fresh clone of 10,000 tasks ends with 20 packs, not the 50
 * past which git's `gc --auto` repacks on the user's next commit; a part stays far under the
 * bounds on one answer (pack-read.ts), and one past them is fetched again in halves.
 */
const IN_PROCESS_PART = 500;

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
 * Above this many tracked task refs a follower lists before it fetches. A fetch whose tips are all
 * here already still checks them against every local ref (`rev-list --not --all`): with 1,000
 * tasks an idle look by fetch cost about 3x the CPU of a listing of the same refs (1.6x its
 * time), more than the one connection it saves on the look that finds a change.
 */
export const FETCH_FIRST_MAX_TASKS = Number(process.env.HANDOFF_FETCH_FIRST_MAX_TASKS ?? 200);

/** Whether this clone is small enough that one fetch per look is cheaper than a listing and a fetch. */
export async function fetchFirst(store: Store, remote: string): Promise<boolean> {
  return !listsInProcess(store, remote) && smallEnough(await trackingTipsOf(store, remote, [TRACKED_TASKS]));
}

/**
 * Where fetches are this process's (smart HTTP, a folder on this disk, git://: named-fetch.ts) a
 * listing and a fetch of what moved are two requests, where a glob `git fetch` is three and its
 * processes; and a glob `git fetch` would write whatever the remote's refs point at before any
 * bound is checked: list first.
 */
function listsInProcess(store: Store, remote: string): boolean {
  return fetchesInProcess(store, remote);
}

const TRACKED_TASKS = `${REF_ROOT}tasks/`;

/** fetchFirst's test on tracking tips already read (any families, the tasks among them). */
function smallEnough(tips: Tips): boolean {
  let n = 0;
  for (const ref of tips.keys()) if (ref.startsWith(TRACKED_TASKS) && ++n > FETCH_FIRST_MAX_TASKS) return false;
  return true;
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

export function fetchLockDir(store: Store): string {
  return `${store.repo.commonDir}/handoff`;
}

/**
 * `refused`: refs whose remote value failed validation (or is from a newer git-handoff); they are
 * left out of `before` and `after` (shown at their local value), so nothing integrates or pushes
 * them. `newlyRefused`: those first refused by this refresh.
 */
export type Refreshed = { ok: true; before: Tips; after: Tips; refused: Quarantined[]; newlyRefused: Quarantined[]; listing?: Listing } | (RemoteFailure & { whole?: boolean });

/** The remote's whole listing a refresh went by, as git printed it (quiet-sync.ts keeps it). */
export interface Listing {
  raw: string;
  prefix: string;
}

/**
 * Brings the tracking refs up to the remote's current values. `before` is what they held first
 * (to tell a ref the remote deleted from one it never had), `after` what the remote has now.
 * Fetches of one clone take turns; one that waited while another refreshed uses that result.
 */
export async function refreshTracking(store: Store, remote: string, known?: Tips, budget?: RemoteBudget, early?: EarlyListing): Promise<Refreshed> {
  const r = await fetchTracking(store, remote, known, budget, undefined, early);
  trace("refresh: listed and fetched");
  if (!r.ok) return r;
  await recordSightings(store, remote, r.before, r.after);
  trace("refresh: sightings recorded");
  const screened = await screenReceived(store, remote, r.before, r.after, false, r.unsent);
  return r.listing ? { ...screened, listing: r.listing } : screened;
}

/**
 * refreshTracking for the refs of some families only (see inFamilies), from `listed`, the
 * remote's refs of those families just read in one advertisement: only refs whose value changed
 * are fetched, and nothing else is listed. `before` and `after` hold those families' refs only.
 * `whole` on a failure: more changed than one named fetch takes, or a ref vanished since the
 * listing; refresh everything instead. `known`: those families' tracking tips, read just before.
 */
export async function refreshFamilies(store: Store, remote: string, families: string[], listed: Tips, budget?: RemoteBudget, known?: Tips): Promise<Refreshed> {
  const r = await fetchTracking(store, remote, known, budget, { families, listed });
  if (r.ok) await recordSightings(store, remote, r.before, r.after);
  return r.ok ? screenReceived(store, remote, r.before, r.after, true, r.unsent) : r;
}

/**
 * refreshTracking for some families (see inFamilies) by one glob fetch and no listing: a family
 * folder is fetched as `<folder>*` with pruning (the fetch's own advertisement tells what moved
 * or went), a single-ref family by its exact name, and only once the tracking refs hold it (an
 * exact name the remote lacks fails the whole fetch; a ref not yet tracked waits for the next
 * full refresh or the claim that needs it). `listFirst` when the caller should list first
 * instead: the clone tracks too many tasks for a fetch per look (fetchFirst), or the fetch failed
 * (such a ref was gone from the remote, or a ref there cannot be sent: see fetchAlone).
 */
export async function fetchFamilies(store: Store, remote: string, families: string[], budget?: RemoteBudget): Promise<Refreshed | (RemoteFailure & { listFirst?: true })> {
  const b = budget ?? (await remoteBudget(store, remote));
  const r = await withFetchLock<{ ok: true; before: Tips; after: Tips } | (RemoteFailure & { listFirst?: true })>(
    fetchLockDir(store),
    remote,
    Math.min(b.until, Date.now() + 2 * b.timeoutMs + 1000),
    async () => {
      const before = await trackingTipsOf(store, remote, families);
      if (!smallEnough(before)) return { ok: false, message: "too many tracked tasks to fetch first", listFirst: true };
      if (listsInProcess(store, remote)) return { ok: false, message: "listed and fetched in process", listFirst: true };
      // A glob fetch over a ref the remote cannot send fails whole: list, and fetch what moved by name.
      for (const q of (await readQuarantine(store, remote)).entries.values()) {
        if (q.unsent && inFamilies(q.ref, families)) return { ok: false, message: `the remote cannot send ${q.ref}`, listFirst: true };
      }
      const exact = families.filter((f) => !f.endsWith("/"));
      const specs = [...families.filter((f) => f.endsWith("/")).map((f) => `${f}*`), ...exact.filter((f) => before.has(f))];
      // Offered as haves: these families' tracking tips only (see fetchHandoffRefs).
      const f = await fetchHandoffRefs(store.storeCwd, remote, callTimeout(b), specs, { prune: true, haves: [...before.values()] });
      if (!f.ok) {
        failOnStaleLock(store.repo.storeDir, f.message);
        // A ref gone since the fetch named it, or one the remote cannot send (it fails every glob
        // fetch over its folder): a listing and a fetch of what moved get past both.
        return f.timedOut ? f : { ...f, listFirst: true };
      }
      return { ok: true, before, after: await trackingTipsOf(store, remote, families) };
    },
    async () => {
      const now = await trackingTipsOf(store, remote, families);
      return { ok: true, before: now, after: now };
    },
    (message) => process.stderr.write(`git-handoff: ${message}\n`),
  );
  if (!r.ok) return r;
  await recordSightings(store, remote, r.before, r.after);
  return screenReceived(store, remote, r.before, r.after, true);
}

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

/** A listing of the remote's refs/handoff/* sent before the caller read its local refs, so both happen at once. */
export interface EarlyListing {
  started: number;
  listing: ReturnType<typeof lsRemoteHandoff>;
}

/** Starts the listing a refresh needs now; hand it to refreshTracking. */
export function listEarly(store: Store, remote: string, budget: RemoteBudget): EarlyListing {
  return { started: Date.now(), listing: lsRemoteHandoff(store.storeCwd, remote, callTimeout(budget), undefined, store.remoteSource) };
}

/** When a fetch of this clone last ended (the stamp withFetchLock leaves), epoch ms; 0 if never. */
function lastFetchEnded(store: Store, remote: string): number {
  try {
    return lstatSync(join(fetchLockDir(store), `fetch-${remote}.done`)).mtimeMs;
  } catch {
    return 0;
  }
}

/** A fetch's outcome: `unsent`, refs the remote listed but could not send, with git's words. */
type Fetched = { ok: true; before: Tips; after: Tips; listing?: Listing; unsent?: Map<string, string> };

/**
 * Words of git's that say an object could not be read or sent, not that the remote is out of reach
 * (and git's checks refusing what came, under fetch.fsckObjects: keep-pack.ts).
 */
const OBJECT_TROUBLE = /tree object|malformed|corrupt|bad (tree|object|commit|blob)|unable to read [0-9a-f]{7}|pack-objects died|did not send all necessary objects|missing (blob|tree|commit|object)|invalid object|fsckObjects/i;

/** `refs` fetched by `fetch` IN_PROCESS_PART at a time, in order; the first failure ends it. */
async function inParts(refs: string[], fetch: (part: string[]) => Promise<FetchResult>): Promise<FetchResult> {
  for (let i = 0; i < refs.length; i += IN_PROCESS_PART) {
    const f = await fetch(refs.slice(i, i + IN_PROCESS_PART));
    if (!f.ok) return f;
  }
  return { ok: true };
}

/**
 * After fetches of all of `refs` failed (by name, or by pattern when there were too many to
 * name): the refs in halves, and halves of the halves that fail, down to the refs that fail alone
 * (a few fetches per such ref, not one per ref). Returns those the remote could not send (with
 * git's message) when others came or the failures name an object, else null: the remote itself
 * is out of reach, or the budget ran out, and the caller reports that.
 */
async function fetchAlone(store: Store, remote: string, b: RemoteBudget, refs: string[], fetchPart: (part: string[]) => Promise<FetchResult>): Promise<Map<string, string> | null> {
  const failed = new Map<string, string>();
  /** Refs whose fetch was refused for passing a bound: the remote sent them, too much of them. */
  const bounded = new Set<string>();
  const objectTrouble = ([ref, m]: [string, string]) => bounded.has(ref) || OBJECT_TROUBLE.test(m);
  let fetched = 0;
  let gaveUp = false;
  const fetch = async (part: string[], knownToFail: boolean): Promise<void> => {
    if (gaveUp || Date.now() >= b.until - 100) {
      gaveUp = true;
      return;
    }
    if (!knownToFail) {
      const f = await fetchPart(part);
      if (f.ok) {
        fetched += part.length;
        return;
      }
      if (f.timedOut) {
        gaveUp = true;
        return;
      }
      if (part.length === 1) {
        // The quarantine's reason: a bound's refusal says itself, git's failure says what git said.
        failed.set(part[0]!, f.bound ? f.message : `the remote could not send it (${f.message})`);
        if (f.bound) bounded.add(part[0]!);
        // Three failures alike and nothing fetched, none naming an object: the remote is gone.
        if (!fetched && failed.size >= 3 && ![...failed].some(objectTrouble)) gaveUp = true;
        return;
      }
    }
    const mid = part.length >> 1;
    await fetch(part.slice(0, mid), false);
    await fetch(part.slice(mid), false);
  };
  // A list short enough to name was just fetched whole, and failed: its halves come first.
  if (refs.length <= NAMED_FETCH_LIMIT) await fetch(refs, true);
  else for (let i = 0; i < refs.length; i += NAMED_FETCH_LIMIT) await fetch(refs.slice(i, i + NAMED_FETCH_LIMIT), false);
  if (gaveUp) return null;
  if (!failed.size) return failed;
  return fetched > 0 || [...failed].every(objectTrouble) ? failed : null;
}

async function fetchTracking(
  store: Store,
  remote: string,
  known?: Tips,
  budget?: RemoteBudget,
  part?: { families: string[]; listed: Tips },
  early?: EarlyListing,
): Promise<Fetched | (RemoteFailure & { whole?: boolean })> {
  const b = budget ?? (await remoteBudget(store, remote));
  const tips = () => (part ? trackingTipsOf(store, remote, part.families) : trackingTips(store, remote));
  return withFetchLock<Fetched | (RemoteFailure & { whole?: boolean })>(
    fetchLockDir(store),
    remote,
    // The holder's own calls are bounded (a listing and a fetch): wait about that long.
    Math.min(b.until, Date.now() + 2 * b.timeoutMs + 1000),
    async () => {
      // `known` (read by the caller just before) saves a listing; if it is older than the refs,
      // the only cost is fetching a ref that was already current.
      const before = known ?? (await tips());
      trace("refresh: fetch lock taken");
      // An early listing is used unless another process fetched since it was sent (the tracking
      // refs may then be newer than it): list again.
      const usable = early && lastFetchEnded(store, remote) < early.started ? await early.listing : null;
      const ls = part ? { ok: true as const, tips: part.listed, raw: undefined } : (usable ?? (await lsRemoteHandoff(store.storeCwd, remote, callTimeout(b), undefined, store.remoteSource)));
      if (!ls.ok) return ls;
      const listing = ls.raw === undefined ? undefined : { raw: ls.raw, prefix: ls.prefix };
      // Loops, not copies of both sides: at 5,000 tasks a sync with nothing new compares 10,000 refs.
      let changed: string[] = [];
      for (const [ref, oid] of ls.tips) if (before.get(ref) !== oid) changed.push(ref);
      const unsent = new Map<string, string>();
      if (changed.length) {
        // A value already refused as one the remote cannot send is not asked for again: it would
        // fail the fetch of everything named with it.
        const q = (await readQuarantine(store, remote)).entries;
        for (const ref of changed) {
          const held = q.get(ref);
          if (held?.unsent && held.oid === ls.tips.get(ref)) unsent.set(ref, held.reason);
        }
        if (unsent.size) changed = changed.filter((ref) => !unsent.has(ref));
      }
      const gone: [string, string][] = [];
      for (const entry of before) if (!ls.tips.has(entry[0])) gone.push(entry);
      if (changed.length) {
        const inProcess = fetchesInProcess(store, remote);
        const named = async (refs: string[]) => fetchNamed(store, remote, refs, ls.tips, before, await ownTips(store, refs, before), () => callTimeout(b));
        let f: FetchResult = { ok: false, message: "" };
        if (changed.length <= NAMED_FETCH_LIMIT) f = await named(changed);
        // From a remote fetched in process, more than one fetch names are fetched by name in parts:
        // a glob fetch is git's, which would write what a bound refuses before judging it.
        else if (inProcess) f = await inParts(changed, named);
        // A glob fetch would move refs of every family: the caller refreshes everything instead.
        if (part && !f.ok) return { ok: false, message: f.message || `${changed.length} refs changed`, whole: true };
        // Too many to name, or one vanished since the listing: take everything in one glob fetch
        // (not from a remote fetched in process: see above).
        if (!f.ok && !f.timedOut && !inProcess) f = await fetchHandoffRefs(store.storeCwd, remote, callTimeout(b));
        // The remote listed its refs but could not send them: one ref whose objects it cannot
        // send (a malformed tree written there on purpose) fails every fetch that names it, and
        // would stop every sync of every clone, a new clone's first one too. Fetches of parts of
        // the list tell which; the rest go on.
        if (!f.ok && !f.timedOut) {
          const fetchPart = inProcess ? named : async (refs: string[]) => fetchHandoffRefs(store.storeCwd, remote, callTimeout(b), refs, { haves: await ownTips(store, refs, before) });
          const alone = await fetchAlone(store, remote, b, changed, fetchPart);
          if (alone) {
            for (const [ref, why] of alone) unsent.set(ref, why);
            f = { ok: true };
          }
        }

        if (!f.ok) {
          // A tracking ref's lock left by a killed git fetch is not the remote's fault: say so.
          failOnStaleLock(store.repo.storeDir, f.message);
          return f;
        }
      }
      if (gone.length) {
        await updateRefs(store.storeCwd, gone.map(([ref, oid]) => ({ ref: trackingRef(remote, ref), new: null, old: oid })), store.zeroOid);
      }
      // A ref that moved again between the listing and the fetch: the fetched value is newer.
      // Nothing changed: the listing itself (only read from here on).
      const after = changed.length || unsent.size ? new Map(ls.tips) : ls.tips;
      for (const [ref, oid] of await trackingFor(store, remote, changed)) after.set(ref, oid);
      // The remote's value of a ref it could not send is what the screening refuses.
      for (const ref of unsent.keys()) after.set(ref, ls.tips.get(ref)!);
      return { ok: true, before, after, listing, ...(unsent.size ? { unsent } : {}) };
    },
    async () => {
      const now = await tips();
      return { ok: true, before: now, after: now };
    },
    (message) => process.stderr.write(`git-handoff: ${message}\n`),
  );
}

/**
 * Validate on receive: every ref whose remote value changed is checked (src/sync/validate-receive.ts)
 * before anything integrates it; what fails is listed in the quarantine and shown at its local
 * value. With nothing changed and nothing quarantined this costs one ref read.
 */
/** The same screening for a few refs fetched on their own (a waiter following one task): only those are judged. */
export async function screenFetched(store: Store, remote: string, before: Tips, after: Tips): Promise<Refreshed & { ok: true }> {
  return screenReceived(store, remote, before, after, true);
}

async function screenReceived(store: Store, remote: string, before: Tips, after: Tips, partial = false, unsent?: Map<string, string>): Promise<Refreshed & { ok: true }> {
  const q = await readQuarantine(store, remote);
  // A partial fetch says nothing about the refs it did not ask for: their quarantine stands.
  const candidates = new Set<string>([...q.entries.keys()].filter((ref) => !partial || after.has(ref)));
  for (const [ref, oid] of after) if (before.get(ref) !== oid) candidates.add(ref);
  if (!candidates.size) return { ok: true, before, after, refused: [], newlyRefused: [] };
  const entries = new Map(q.entries);
  const refused: Quarantined[] = [];
  const newlyRefused: Quarantined[] = [];
  const now = store.now();
  const accepted: string[] = [];
  /** Operations (author and time) of refused commits, and a ref each was refused on. */
  const operations = new Map<string, string>();
  for (const ref of candidates) {
    const tip = after.get(ref);
    const held = entries.get(ref);
    if (tip === undefined) {
      entries.delete(ref); // gone from the remote
      continue;
    }
    if (held && held.oid === tip) {
      refused.push(held);
      continue;
    }
    const anchor = held ? held.anchor : (before.get(ref) ?? null);
    const cannot = unsent?.get(ref);
    const verdict: Verdict = cannot !== undefined ? { ok: false, kind: "invalid", reason: cannot } : await validateReceived(store, ref, tip, anchor, now);
    if (verdict.ok) {
      entries.delete(ref);
      accepted.push(ref);
      continue;
    }
    const entry: Quarantined = { ref, oid: tip, anchor, kind: verdict.kind, reason: verdict.reason, at: now.toISOString(), ...(cannot !== undefined ? { unsent: true as const } : {}) };
    entries.set(ref, entry);
    refused.push(entry);
    newlyRefused.push(entry);
    if (verdict.operation) operations.set(verdict.operation, ref);
  }
  // Refs written by one operation with a refused one (a claim's task and its leases) wait with it.
  if (operations.size) {
    const keys = new Set(operations.keys());
    for (const ref of accepted) {
      const tip = after.get(ref)!;
      const anchor = before.get(ref) ?? null;
      if (!(await sharesOperation(store, tip, anchor, keys))) continue;
      const entry: Quarantined = { ref, oid: tip, anchor, kind: "invalid", reason: `written by the same operation as a refused change to ${[...operations.values()].join(", ")}`, at: now.toISOString() };
      entries.set(ref, entry);
      refused.push(entry);
      newlyRefused.push(entry);
    }
  }
  if (newlyRefused.length || entries.size !== q.entries.size) {
    // A concurrent sync may have written it first; it decided the same from the same refs.
    await writeQuarantine(store, remote, entries, q.tip, `quarantine of ${remote}: ${entries.size} ref(s)`);
  }
  if (!refused.length) return { ok: true, before, after, refused, newlyRefused };
  const masked = { before: new Map(before), after: new Map(after) };
  for (const e of refused) {
    const local = await store.readRef(e.ref);
    for (const tips of [masked.before, masked.after]) local === null ? tips.delete(e.ref) : tips.set(e.ref, local);
  }
  return { ok: true, ...masked, refused, newlyRefused };
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
