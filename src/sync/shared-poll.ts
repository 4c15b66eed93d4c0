// One poller per clone shared by every process that follows refs of the sync remote (each `wait`,
// each worker). Every follower registers the refs it wants in .git/handoff/poll-<remote>/; when one
// needs a fresh look, it takes .git/handoff/poll-<remote>.lock and asks the remote once for the
// refs all live followers want, then leaves a stamp saying when that look started and which refs
// it covered. A follower that finds a look started since its own last one (or waited on the lock
// while another looked) reads the refs that look brought instead of asking the remote itself. So
// however many processes wait, at most one of a clone asks the remote at a time, and each asks only
// when nobody did since it last looked. A holder that is gone is broken at once (owned locks).
import { uniqueSuffix } from "../git/unique-name.ts";
import { readdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { acquireOwnedLock, holderGone, readOwner, selfOwner } from "../git/owned-lock.ts";
import type { Store } from "../store/store.ts";
import { pullRefs, type Pulled } from "./follow-ref.ts";
import { callTimeout, remoteBudget } from "./remote-budget.ts";
import { fetchLockDir } from "./fetch-lock-dir.ts";
import { isFolder, ownFolder, readTextNoFollow, replaceFile } from "../git/safe-file.ts";

/** What the last shared look found: when it started, what it covered, what was refused on receive. */
interface Stamp {
  started: number;
  refs: string[];
  ok: boolean;
  message?: string;
  refused: { ref: string; reason: string }[];
}

export interface Follower {
  /**
   * The refs brought up to the remote's values by a look that started after this follower's
   * previous look ended (its own or another process's); `changed` when one of them moved here
   * since this follower last looked. `signal` aborted (the caller stopped waiting) ends the look
   * at once, its remote call included.
   */
  look(refs: string[], signal?: AbortSignal): Promise<Pulled>;
  /** Stops following (removes the registration). */
  close(): void;
}

const safe = (remote: string) => encodeURIComponent(remote);

export function pollPaths(store: Store, remote: string): { lock: string; stamp: string; wants: string } {
  const dir = fetchLockDir(store);
  return { lock: join(dir, `poll-${safe(remote)}.lock`), stamp: join(dir, `poll-${safe(remote)}.json`), wants: join(dir, `poll-${safe(remote)}`) };
}

/** `current`: the Store each look uses (as for followQueue); `store` names the clone. */
export function openFollower(store: Store, remote: string, current: () => Promise<Store> = async () => store): Follower {
  const paths = pollPaths(store, remote);
  const mine = join(paths.wants, `${process.pid}-${uniqueSuffix()}.json`);
  let registered = "";
  let lastLook = 0;
  const seen = new Map<string, string | null>();

  const register = (refs: string[]) => {
    const key = JSON.stringify([...refs].sort());
    if (key === registered) return;
    ownFolder(paths.wants);
    replaceFile(mine, JSON.stringify({ ...selfOwner(), refs }));
    registered = key;
    // Only a look that starts after this point is sure to have read the new registration.
    lastLook = Date.now();
  };

  return {
    async look(refs, signal) {
      const store = await current();
      register(refs);
      const covers = (s: Stamp | null): s is Stamp => !!s && s.started > lastLook && refs.every((r) => s.refs.includes(r));
      let stamp = readStamp(paths.stamp);
      if (!covers(stamp)) {
        const budget = await remoteBudget(store, remote);
        // A holder's look is one listing and at most one fetch: wait about that long for it.
        const got = await acquireOwnedLock(paths.lock, Date.now() + 2 * callTimeout(budget) + 1000, undefined, signal);
        if (!got.ok) {
          const who = got.owner ? `process ${got.owner.pid} on ${got.owner.host}` : "another process";
          return { ok: false, message: `${who} held ${paths.lock} for ${Math.round(got.waitedMs / 1000)} s` };
        }
        try {
          stamp = readStamp(paths.stamp);
          // Another process looked while this one waited for the lock: take its look.
          if (!covers(stamp)) stamp = await lookForAll(store, remote, paths, refs, stamp, signal);
        } finally {
          got.release();
        }
      }
      lastLook = Date.now();
      if (!stamp.ok) return { ok: false, message: stamp.message ?? "the remote could not be read" };
      let changed = false;
      for (const ref of refs) {
        const now = await store.readRef(ref);
        if (seen.has(ref) && seen.get(ref) !== now) changed = true;
        seen.set(ref, now);
      }
      return { ok: true, changed, refused: stamp.refused.filter((q) => refs.includes(q.ref)) };
    },
    close() {
      try {
        unlinkSync(mine);
      } catch {
        /* never written, or already gone */
      }
    },
  };
}

/** One look at the remote for every live follower's refs; the stamp it leaves is returned. */
async function lookForAll(store: Store, remote: string, paths: ReturnType<typeof pollPaths>, own: string[], prev: Stamp | null, signal?: AbortSignal): Promise<Stamp> {
  const started = Date.now();
  const refs = [...new Set([...own, ...liveWants(paths.wants)])].sort();
  // Only needed to lift an earlier refusal, which is rare: read nothing more otherwise.
  const carried = (prev?.refused ?? []).filter((q) => refs.includes(q.ref));
  const before = new Map<string, string | null>();
  for (const q of carried) before.set(q.ref, await store.readRef(q.ref));
  const p = await pullRefs(store, remote, refs, signal);
  let stamp: Stamp;
  // Cut short by this follower's own caller, it says nothing of the remote: the others look for themselves.
  if (!p.ok && signal?.aborted) return { started, refs, ok: false, message: "stopped waiting", refused: prev?.refused ?? [] };
  if (!p.ok) stamp = { started, refs, ok: false, message: p.message, refused: prev?.refused ?? [] };
  else {
    // A refusal stands until the ref itself moves here: followers that did not take this look
    // must still learn of it.
    const moved = new Set<string>();
    for (const [ref, was] of before) if ((await store.readRef(ref)) !== was) moved.add(ref);
    const fresh = p.refused ?? [];
    const kept = carried.filter((q) => !moved.has(q.ref) && !fresh.some((f) => f.ref === q.ref));
    stamp = { started, refs, ok: true, refused: [...kept, ...fresh] };
  }
  replaceFile(paths.stamp, JSON.stringify(stamp));
  return stamp;
}

/** The refs registered by followers whose process is alive; registrations of gone ones are removed. */
function liveWants(dir: string): string[] {
  let names: string[] = [];
  try {
    // Only a folder of our own is listed (and registrations of gone processes removed from it).
    if (!isFolder(dir)) return [];
    names = readdirSync(dir).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const n of names) {
    const path = join(dir, n);
    const owner = readOwner(path);
    if (owner && holderGone(owner)) {
      try {
        unlinkSync(path);
      } catch {
        /* removed by another */
      }
      continue;
    }
    try {
      const refs = (JSON.parse(readTextNoFollow(path) ?? "null") as { refs?: unknown }).refs;
      if (Array.isArray(refs)) for (const r of refs) if (typeof r === "string" && r.startsWith("refs/handoff/")) out.push(r);
    } catch {
      /* half-written or removed meanwhile: that follower looks for itself */
    }
  }
  return out;
}

function readStamp(path: string): Stamp | null {
  try {
    const s = JSON.parse(readTextNoFollow(path) ?? "null") as Partial<Stamp>;
    if (typeof s.started !== "number" || !Array.isArray(s.refs) || typeof s.ok !== "boolean") return null;
    return { started: s.started, refs: s.refs, ok: s.ok, message: s.message, refused: Array.isArray(s.refused) ? s.refused : [] };
  } catch {
    return null;
  }
}

