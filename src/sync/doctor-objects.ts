// doctor's object check: refs under refs/handoff*/ whose objects are missing (a prune ran while
// an agent wrote) or there but unreadable to git (a hand-made tree that is not well formed, a
// damaged file). `--repair` logs each one in the repair log, removes it, and restores it from
// the tracking refs or the sync remote when they still have a complete copy, so the user's
// `git gc` and `git fetch` work again. The remote's copy is fetched again whole, in process where
// fetches are (named-fetch.ts refetchNamed: the same bounds as any fetch, a damaged loose copy
// moved aside so it cannot hide the good one), else by `git fetch --refetch`.
import { damageBelow, allComplete } from "../git/connectivity.ts";
import { damagedObjectsDir } from "../git/damaged-loose.ts";
import { fetchHandoffRefs, type FetchResult } from "../git/fetch-refs.ts";
import { lsRemoteHandoff } from "../git/remote-listing.ts";
import { trackingPrefix, trackingRef } from "../git/tracking-ref.ts";
import { listRefs, type RefTip } from "../git/refs.ts";
import { logRepairs, REPAIR_LOG_REF, type Repair } from "../store/repair-log.ts";
import { REF_ROOT, type Store } from "../store/store.ts";
import type { Check } from "./doctor-check.ts";
import { fetchesInProcess, refetchNamed } from "./named-fetch.ts";
import { remoteTimeoutMs } from "./remote-budget.ts";

interface Broken extends RefTip {
  missing: string[];
  /** git's words for an object below it that is there but cannot be read, or null. */
  unreadable: string | null;
}

export async function objectChecks(store: Store, repair: boolean): Promise<Check[]> {
  const refs = (await Promise.all(["refs/handoff/", "refs/handoff-remotes/", "refs/handoff-local/"].map((p) => listRefs(store.storeCwd, p)))).flat();
  if (await allComplete(store.storeCwd, refs.map((r) => r.oid))) {
    return [{ name: "objects", status: "ok", detail: `${refs.length} coordination ref(s), every object they need present` }];
  }
  const broken: Broken[] = [];
  for (const r of refs) {
    const damage = await damageBelow(store.storeCwd, r.oid);
    if (damage) broken.push({ ...r, ...damage });
  }
  const list = broken.map((b) => `${b.name} (${b.unreadable !== null ? `an object git cannot read: ${b.unreadable}` : `${b.missing.length} missing, e.g. ${b.missing[0]!.slice(0, 12)}`})`);
  if (!repair) {
    const gone = broken.filter((b) => b.unreadable === null).length;
    const damaged = broken.length - gone;
    // A prune explains a missing object; an unreadable one was made by hand or damaged on disk.
    const what = [gone ? `${gone} ref(s) point at missing objects (a concurrent git gc --prune?)` : "", damaged ? `${damaged} ref(s) point at objects git cannot read (made by hand, or damaged on disk)` : ""].filter(Boolean).join(" and ");
    return [{ name: "objects", status: "fail", detail: `${what}: ${list.slice(0, 5).join("; ")}`, fix: "git handoff doctor --repair (restores from the sync remote when it can, else removes them; logged in refs/handoff-local/repair-log)" }];
  }
  const { repairs, moved, refused } = await repairBroken(store, broken);
  const restored = repairs.filter((r) => r.now).length;
  const notes = [
    ...(moved.length ? [`${moved.length} damaged loose object(s) moved aside into ${damagedObjectsDir(store.repo.storeDir)}/`] : []),
    ...[...refused].map(([ref, why]) => `the remote's copy of ${ref} was refused: ${why}`),
  ];
  const complete = await allComplete(store.storeCwd, (await Promise.all(["refs/handoff/", "refs/handoff-remotes/", "refs/handoff-local/"].map((p) => listRefs(store.storeCwd, p)))).flat().map((r) => r.oid));
  return [
    {
      name: "objects",
      status: complete ? "ok" : "fail",
      detail: `repaired ${repairs.length} ref(s) with missing or unreadable objects: ${restored} restored, ${repairs.length - restored} removed (see git log ${REPAIR_LOG_REF}): ${list.slice(0, 5).join("; ")}${notes.map((n) => `; ${n}`).join("")}`,
      ...(complete ? {} : { fix: "some refs are still incomplete: run git handoff doctor --repair again" }),
    },
  ];
}

async function repairBroken(store: Store, broken: Broken[]): Promise<{ repairs: Repair[]; moved: string[]; refused: Map<string, string> }> {
  const remote = await store.syncRemote();
  // First out of the way, all of them: git fetch (and gc) fail while any ref is broken.
  const gone: Repair[] = [];
  // The repair log too, as the check reports it: one at missing objects breaks git gc like any
  // other, and logRepairs starts it again with this removal (its old value named) as its first entry.
  for (const b of broken) {
    const r = await store.updateRefs([{ ref: b.name, new: null, old: b.oid }]);
    if (r.ok) gone.push({ ref: b.name, was: b.oid, now: null, why: b.unreadable !== null ? `an object git cannot read: ${b.unreadable}` : `objects missing: ${b.missing.slice(0, 3).join(", ")}` });
  }
  const local = gone.filter((g) => g.ref.startsWith(REF_ROOT));
  const moved: string[] = [];
  /** Refs whose copy the remote sent and this process refused (a bound passed, an answer out of shape), with why. */
  const refused = new Map<string, string>();
  if (remote && local.length) {
    // The remote's copies, into the tracking refs (complete, or the fetch fails).
    const timeout = await remoteTimeoutMs(store);
    const again = async (refs: string[]) => {
      const f = await fetchAgain(store, remote, refs, timeout);
      moved.push(...(f.moved ?? []));
      if (!f.ok && f.bound) for (const ref of refs) refused.set(ref, f.message);
      return f;
    };
    const f = await again(local.map((g) => g.ref));
    // One the remote does not have (or sends out of bounds) fails the whole fetch: then one at a time.
    if (!f.ok && !f.timedOut && local.length > 1) {
      refused.clear();
      for (const g of local) await again([g.ref]);
    }
  }
  for (const g of gone) {
    if (!remote || g.ref.startsWith(REF_ROOT)) continue;
    // A tracking ref the fetch above wrote again, complete this time.
    const now = await store.readRef(g.ref);
    if (now && !(await damageBelow(store.storeCwd, now))) {
      g.now = now;
      g.why += "; fetched again from the remote";
    }
  }
  for (const g of local) {
    if (!remote) continue;
    const tracked = await store.readRef(trackingRef(remote, g.ref));
    if (!tracked || (await damageBelow(store.storeCwd, tracked))) continue;
    if ((await store.updateRefs([{ ref: g.ref, new: tracked, old: null }])).ok) {
      g.now = tracked;
      g.why += `; restored from ${trackingPrefix(remote)} (the remote's copy; local writes since the last push are lost)`;
    }
  }
  for (const g of local) if (!g.now && refused.has(g.ref)) g.why += `; the remote's copy was refused: ${refused.get(g.ref)}`;
  await logRepairs(store, gone);
  return { repairs: gone, moved, refused };
}

/**
 * `refs` fetched again from `remote`, every object sent again: in process where fetches from it
 * are, under their bounds (listed first: the fetch asks for the values listed; a ref the remote
 * lacks is left out), else `git fetch --refetch` (git's, and unbounded: docs/security.md).
 */
async function fetchAgain(store: Store, remote: string, refs: string[], timeoutMs: number): Promise<FetchResult & { moved?: string[] }> {
  if (!fetchesInProcess(store, remote)) return fetchHandoffRefs(store.storeCwd, remote, timeoutMs, refs, { refetch: true });
  const until = Date.now() + timeoutMs;
  const left = () => Math.max(1, until - Date.now());
  const ls = await lsRemoteHandoff(store.storeCwd, remote, left(), refs, store.remoteSource);
  if (!ls.ok) return ls;
  const there = refs.filter((r) => ls.tips.has(r));
  if (!there.length) return { ok: false, message: `${remote} has none of ${refs.join(", ")}` };
  const tracked = new Map<string, string>();
  for (const r of there) {
    const t = await store.readRef(trackingRef(remote, r));
    if (t) tracked.set(r, t);
  }
  return refetchNamed(store, remote, there, ls.tips, tracked, left);
}
