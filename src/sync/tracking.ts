// The tracking refs (refs/handoff-remotes/<remote>/*): what the remote had when last asked.
// Refreshing asks the remote for its list first and fetches only refs whose value changed, so
// with nothing new a refresh costs one ref advertisement.
import { listRefs, updateRefs } from "../git/refs.ts";
import { fetchHandoffRefs, lsRemoteHandoff, trackingPrefix, trackingRef, withFetchLock, type RemoteFailure } from "../git/remote.ts";
import { callTimeout, remoteBudget, type RemoteBudget } from "./remote-budget.ts";
import { failOnStaleLock } from "../store/stale-lock.ts";
import { git } from "../git/run.ts";
import { REF_ROOT, type Store } from "../store/store.ts";

export type Tips = Map<string, string>;

/** Above this many changed refs one glob fetch is cheaper than naming each. */
const NAMED_FETCH_LIMIT = 200;

/** The remote's refs as last fetched, keyed by their refs/handoff/* name. */
export async function trackingTips(store: Store, remote: string): Promise<Tips> {
  const prefix = trackingPrefix(remote);
  return new Map((await listRefs(store.cwd, prefix)).map((t) => [REF_ROOT + t.name.slice(prefix.length), t.oid]));
}

/** Tracking values of just these refs (one `for-each-ref` with exact names). */
export async function trackingFor(store: Store, remote: string, refs: string[]): Promise<Tips> {
  const out: Tips = new Map();
  if (!refs.length) return out;
  const r = await git(["for-each-ref", "--format=%(objectname) %(refname)", ...refs.map((x) => trackingRef(remote, x))], { cwd: store.cwd });
  const prefix = trackingPrefix(remote);
  for (const line of r.stdout.split("\n")) {
    const sp = line.indexOf(" ");
    if (sp > 0) out.set(REF_ROOT + line.slice(sp + 1 + prefix.length), line.slice(0, sp));
  }
  return out;
}

export function fetchLockDir(store: Store): string {
  return `${store.repo.commonDir}/handoff`;
}

export type Refreshed = { ok: true; before: Tips; after: Tips } | RemoteFailure;

/**
 * Brings the tracking refs up to the remote's current values. `before` is what they held first
 * (to tell a ref the remote deleted from one it never had), `after` what the remote has now.
 * Fetches of one clone take turns; one that waited while another refreshed uses that result.
 */
export async function refreshTracking(store: Store, remote: string, known?: Tips, budget?: RemoteBudget): Promise<Refreshed> {
  const b = budget ?? (await remoteBudget(store, remote));
  return withFetchLock<Refreshed>(
    fetchLockDir(store),
    remote,
    // The holder's own calls are bounded (a listing and a fetch): wait about that long.
    Math.min(b.until, Date.now() + 2 * b.timeoutMs + 1000),
    async () => {
      // `known` (read by the caller just before) saves a listing; if it is older than the refs,
      // the only cost is fetching a ref that was already current.
      const before = known ?? (await trackingTips(store, remote));
      const ls = await lsRemoteHandoff(store.cwd, remote, callTimeout(b));
      if (!ls.ok) return ls;
      const changed = [...ls.tips].filter(([ref, oid]) => before.get(ref) !== oid).map(([ref]) => ref);
      const gone = [...before].filter(([ref]) => !ls.tips.has(ref));
      if (changed.length) {
        let f = changed.length <= NAMED_FETCH_LIMIT ? await fetchHandoffRefs(store.cwd, remote, callTimeout(b), changed) : { ok: false as const, message: "" };
        // Too many to name, or one vanished since the listing: take everything in one glob fetch.
        if (!f.ok && !f.timedOut) f = await fetchHandoffRefs(store.cwd, remote, callTimeout(b));
        if (!f.ok) {
          // A tracking ref's lock left by a killed git fetch is not the remote's fault: say so.
          failOnStaleLock(store.repo.commonDir, f.message);
          return f;
        }
      }
      if (gone.length) {
        await updateRefs(store.cwd, gone.map(([ref, oid]) => ({ ref: trackingRef(remote, ref), new: null, old: oid })), store.zeroOid);
      }
      const after = new Map(ls.tips);
      // A ref that moved again between the listing and the fetch: the fetched value is newer.
      for (const [ref, oid] of await trackingFor(store, remote, changed)) after.set(ref, oid);
      return { ok: true, before, after };
    },
    async () => {
      const now = await trackingTips(store, remote);
      return { ok: true, before: now, after: now };
    },
    (message) => process.stderr.write(`git-handoff: ${message}\n`),
  );
}

/** Local, tracking and tentative-marker refs in one listing (sync needs all three). */
export async function snapshot(store: Store, remote: string): Promise<{ local: Tips; tracking: Tips; tentative: number }> {
  const prefix = trackingPrefix(remote);
  const r = await git(["for-each-ref", "--format=%(objectname) %(refname)", REF_ROOT, prefix, "refs/handoff-local/tentative/"], { cwd: store.cwd });
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
