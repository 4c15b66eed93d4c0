// doctor's object check: refs under refs/handoff*/ whose objects are missing (a prune ran while
// an agent wrote). `--repair` logs each one in the repair log, removes it, and restores it from
// the tracking refs or the sync remote when they still have a complete copy, so the user's
// `git gc` and `git fetch` work again.
import { missingBelow, allComplete } from "../git/connectivity.ts";
import { fetchHandoffRefs, trackingPrefix, trackingRef } from "../git/remote.ts";
import { listRefs, type RefTip } from "../git/refs.ts";
import { logRepairs, REPAIR_LOG_REF, type Repair } from "../store/repair-log.ts";
import { REF_ROOT, type Store } from "../store/store.ts";
import type { Check } from "./doctor-check.ts";
import { remoteTimeoutMs } from "./remote-budget.ts";

interface Broken extends RefTip {
  missing: string[];
}

export async function objectChecks(store: Store, repair: boolean): Promise<Check[]> {
  const refs = (await Promise.all(["refs/handoff/", "refs/handoff-remotes/", "refs/handoff-local/"].map((p) => listRefs(store.storeCwd, p)))).flat();
  if (await allComplete(store.storeCwd, refs.map((r) => r.oid))) {
    return [{ name: "objects", status: "ok", detail: `${refs.length} coordination ref(s), every object they need present` }];
  }
  const broken: Broken[] = [];
  for (const r of refs) {
    const missing = await missingBelow(store.storeCwd, r.oid);
    if (missing.length) broken.push({ ...r, missing });
  }
  const list = broken.map((b) => `${b.name} (${b.missing.length} missing, e.g. ${b.missing[0]!.slice(0, 12)})`);
  if (!repair) {
    return [{ name: "objects", status: "fail", detail: `${broken.length} ref(s) point at missing objects (a concurrent git gc --prune?): ${list.slice(0, 5).join("; ")}`, fix: "git handoff doctor --repair (restores from the sync remote when it can, else removes them; logged in refs/handoff-local/repair-log)" }];
  }
  const repairs = await repairBroken(store, broken);
  const restored = repairs.filter((r) => r.now).length;
  const complete = await allComplete(store.storeCwd, (await Promise.all(["refs/handoff/", "refs/handoff-remotes/", "refs/handoff-local/"].map((p) => listRefs(store.storeCwd, p)))).flat().map((r) => r.oid));
  return [
    {
      name: "objects",
      status: complete ? "ok" : "fail",
      detail: `repaired ${repairs.length} ref(s) with missing objects: ${restored} restored, ${repairs.length - restored} removed (see git log ${REPAIR_LOG_REF}): ${list.slice(0, 5).join("; ")}`,
      ...(complete ? {} : { fix: "some refs are still incomplete: run git handoff doctor --repair again" }),
    },
  ];
}

async function repairBroken(store: Store, broken: Broken[]): Promise<Repair[]> {
  const remote = await store.syncRemote();
  // First out of the way, all of them: git fetch (and gc) fail while any ref is broken.
  const gone: Repair[] = [];
  for (const b of broken) {
    if (b.name === REPAIR_LOG_REF) continue;
    const r = await store.updateRefs([{ ref: b.name, new: null, old: b.oid }]);
    if (r.ok) gone.push({ ref: b.name, was: b.oid, now: null, why: `objects missing: ${b.missing.slice(0, 3).join(", ")}` });
  }
  const local = gone.filter((g) => g.ref.startsWith(REF_ROOT));
  if (remote && local.length) {
    // The remote's copies, into the tracking refs (complete, or the fetch fails).
    const timeout = await remoteTimeoutMs(store);
    const f = await fetchHandoffRefs(store.storeCwd, remote, timeout, local.map((g) => g.ref), { refetch: true });
    // One the remote does not have fails the whole fetch: then one at a time.
    if (!f.ok && !f.timedOut && local.length > 1) for (const g of local) await fetchHandoffRefs(store.storeCwd, remote, timeout, [g.ref], { refetch: true });
  }
  for (const g of gone) {
    if (!remote || g.ref.startsWith(REF_ROOT)) continue;
    // A tracking ref the fetch above wrote again, complete this time.
    const now = await store.readRef(g.ref);
    if (now && !(await missingBelow(store.storeCwd, now)).length) {
      g.now = now;
      g.why += "; fetched again from the remote";
    }
  }
  for (const g of local) {
    if (!remote) continue;
    const tracked = await store.readRef(trackingRef(remote, g.ref));
    if (!tracked || (await missingBelow(store.storeCwd, tracked)).length) continue;
    if ((await store.updateRefs([{ ref: g.ref, new: tracked, old: null }])).ok) {
      g.now = tracked;
      g.why += `; restored from ${trackingPrefix(remote)} (the remote's copy; local writes since the last push are lost)`;
    }
  }
  await logRepairs(store, gone);
  return gone;
}
