// Bringing the tracking refs up to the remote's current values: the remote's list first, then a
// fetch of only the refs whose value changed (by name, in parts or in halves: fetch-in-parts.ts),
// so with nothing new a refresh costs one ref advertisement; then the screening of what came
// (screen-received.ts). Split out of tracking.ts, which keeps reading the tracking refs.
import { updateRefs } from "../git/refs.ts";
import { fetchHandoffRefs, type FetchResult } from "../git/fetch-refs.ts";
import { withFetchLock } from "../git/fetch-lock.ts";
import type { RemoteFailure } from "../git/remote-failure.ts";
import { lsRemoteHandoff } from "../git/remote-listing.ts";
import type { StampedListing } from "../git/path-remote.ts";
import { trackingRef } from "../git/tracking-ref.ts";
import { failOnStaleLock } from "../store/stale-lock.ts";
import type { Store } from "../store/store.ts";
import { fetchAlone, inParts, NAMED_FETCH_LIMIT } from "./fetch-in-parts.ts";
import { fetchLockDir, lastFetchEnded } from "./fetch-lock-dir.ts";
import { fetchesInProcess, fetchNamed } from "./named-fetch.ts";
import { ownTips } from "./own-tips.ts";
import { readQuarantine, type Quarantined } from "./quarantine.ts";
import { callTimeout, remoteBudget, type RemoteBudget } from "./remote-budget.ts";
import { screenReceived } from "./screen-received.ts";
import { recordSightings } from "./skew.ts";
import { trace } from "./trace.ts";
import { trackingFor, trackingTips, trackingTipsOf, type Tips } from "./tracking.ts";

/**
 * `refused`: refs whose remote value failed validation (or is from a newer git-handoff); they are
 * left out of `before` and `after` (shown at their local value), so nothing integrates or pushes
 * them. `newlyRefused`: those first refused by this refresh.
 */
export type Refreshed = { ok: true; before: Tips; after: Tips; refused: Quarantined[]; newlyRefused: Quarantined[]; listing?: Listing } | (RemoteFailure & { whole?: boolean });

/**
 * The remote's whole listing a refresh went by, as git printed it (quiet-sync.ts keeps it), and
 * for a remote on this disk the stamp of the ref files it was read from (remote-listing.ts).
 */
export interface Listing {
  raw: string;
  prefix: string;
  stamp?: string;
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

/** A listing of the remote's refs/handoff/* sent before the caller read its local refs, so both happen at once. */
export interface EarlyListing {
  started: number;
  listing: ReturnType<typeof lsRemoteHandoff>;
}

/** Starts the listing a refresh needs now; hand it to refreshTracking. `known`: see lsRemoteHandoff. */
export function listEarly(store: Store, remote: string, budget: RemoteBudget, known?: StampedListing): EarlyListing {
  return { started: Date.now(), listing: lsRemoteHandoff(store.storeCwd, remote, callTimeout(budget), undefined, store.remoteSource, known) };
}

/** A fetch's outcome: `unsent`, refs the remote listed but could not send, with git's words. */
type Fetched = { ok: true; before: Tips; after: Tips; listing?: Listing; unsent?: Map<string, string> };

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
      const listing = ls.raw === undefined ? undefined : { raw: ls.raw, prefix: ls.prefix, ...("stamp" in ls && ls.stamp !== undefined ? { stamp: ls.stamp } : {}) };
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
          const alone = await fetchAlone(b, changed, fetchPart);
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

