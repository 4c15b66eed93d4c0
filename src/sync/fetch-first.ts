// Following by fetch: a look at some families by one glob fetch and no listing, where the clone
// tracks few enough tasks that this is cheaper than a listing and a fetch. Split out of
// tracking.ts: it is the other way to a refresh (refresh-tracking.ts lists first), with its own
// test of when it applies.
import { fetchHandoffRefs } from "../git/fetch-refs.ts";
import { withFetchLock } from "../git/fetch-lock.ts";
import type { RemoteFailure } from "../git/remote-failure.ts";
import { inFamilies } from "../git/remote-ref.ts";
import { failOnStaleLock } from "../store/stale-lock.ts";
import { REF_ROOT, type Store } from "../store/store.ts";
import { fetchLockDir } from "./fetch-lock-dir.ts";
import { fetchesInProcess } from "./named-fetch.ts";
import { readQuarantine } from "./quarantine.ts";
import type { Refreshed } from "./refresh-tracking.ts";
import { callTimeout, remoteBudget, type RemoteBudget } from "./remote-budget.ts";
import { screenReceived } from "./screen-received.ts";
import { recordSightings } from "./skew.ts";
import { trackingTipsOf, type Tips } from "./tracking.ts";

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

