// Following the remote's task queue while waiting for work (a worker, MCP `watch`): one fetch of
// the tasks, their inputs and the lease set per look (its advertisement covers just those
// families; objects come only for refs that moved; no other family is read); in a clone of many
// tasks, a listing of those families and a fetch of just the refs that moved. New tasks have no
// ref to follow yet, so the shared poller's exact-ref looks cannot see them: this looks at the
// family instead.
// Shared the way the poller is (shared-poll.ts): one process of the clone looks at a time, under
// .git/handoff/queue-<remote>.lock, and leaves a stamp saying when its look started; a watcher that
// finds a look started since its own last one uses what that look brought (the refs it fetched
// are this clone's refs) instead of asking the remote again.

import { join } from "node:path";
import { acquireOwnedLock } from "../git/owned-lock.ts";
import { lsRemoteFamilies } from "../git/remote-ref.ts";
import { integrate } from "./integrate.ts";
import { recordConflicts } from "./local-area.ts";
import type { Store } from "../store/store.ts";
import { callTimeout, remoteBudget } from "./remote-budget.ts";
import { forgetMovedRemote } from "./tracking-identity.ts";
import { fetchFamilies } from "./fetch-first.ts";
import { fetchLockDir } from "./fetch-lock-dir.ts";
import { refreshFamilies } from "./refresh-tracking.ts";
import { trackingTipsOf } from "./tracking.ts";
import { ownFolder, readTextNoFollow, replaceFile } from "../git/safe-file.ts";
import { trace } from "./trace.ts";

export type QueueLook = { ok: true; changed: boolean } | { ok: false; message: string };

export const TASK_FAMILY = "refs/handoff/tasks/";

interface Stamp {
  started: number;
  ok: boolean;
  message?: string;
}

export interface QueueFollower {
  /** The remote's task refs as of a look that started after this follower's previous look. */
  look(): Promise<QueueLook>;
}

export function queuePaths(store: Store, remote: string): { lock: string; stamp: string } {
  const dir = fetchLockDir(store);
  ownFolder(dir);
  const safe = encodeURIComponent(remote);
  return { lock: join(dir, `queue-${safe}.lock`), stamp: join(dir, `queue-${safe}.json`) };
}

/**
 * `current`: the Store each look uses, for a follower that outlives one (a worker's, whose Store
 * is replaced when the policy changes: fresh-store.ts); `store` names the clone.
 */
export function followQueue(store: Store, remote: string, current: () => Promise<Store> = async () => store): QueueFollower {
  const paths = queuePaths(store, remote);
  // Only a look that started once this follower existed counts (a stamp from before says nothing
  // about tasks pushed since); the millisecond of creation counts, so a look taken right away does.
  let lastLook = Date.now() - 1;
  return {
    async look() {
      const since = lastLook;
      const fresh = (s: Stamp | null): s is Stamp => !!s && s.started > since;
      let stamp = readStamp(paths.stamp);
      let changed = false;
      if (!fresh(stamp)) {
        const store = await current();
        const budget = await remoteBudget(store, remote);
        const got = await acquireOwnedLock(paths.lock, Date.now() + 2 * callTimeout(budget) + 1000);
        if (!got.ok) return { ok: false, message: `${got.owner ? `process ${got.owner.pid} on ${got.owner.host}` : "another process"} held ${paths.lock}` };
        try {
          stamp = readStamp(paths.stamp);
          if (!fresh(stamp)) {
            const started = Date.now();
            const r = await lookOnce(store, remote);
            changed = r.ok && r.changed;
            stamp = r.ok ? { started, ok: true } : { started, ok: false, message: r.message };
            replaceFile(paths.stamp, JSON.stringify(stamp));
          }
        } finally {
          got.release();
        }
      }
      lastLook = Date.now();
      return stamp.ok ? { ok: true, changed } : { ok: false, message: stamp.message ?? "the remote could not be read" };
    },
  };
}

/**
 * What a worker needs to claim a new task: the tasks, their inputs, the lease set (a claim with a
 * scope writes it). One advertisement lists all three; nothing else is listed or fetched.
 */
export const QUEUE_FAMILIES = [TASK_FAMILY, "refs/handoff/inputs/", "refs/handoff/leases"];

/**
 * One look: one fetch of the queue's families (what moved comes with it), applied here. The
 * listing first in a clone of many tasks (tracking.ts FETCH_FIRST_MAX_TASKS), or when a ref the
 * fetch names exactly was gone from the remote.
 */
async function lookOnce(store: Store, remote: string): Promise<QueueLook> {
  await forgetMovedRemote(store, remote);
  const budget = await remoteBudget(store, remote);
  trace("queue: fetching");
  const f = await fetchFamilies(store, remote, QUEUE_FAMILIES, budget);
  trace("queue: fetched");
  if (!f.ok) return "listFirst" in f && f.listFirst ? listThenFetch(store, remote) : { ok: false, message: f.message };
  const moved = (family: (ref: string) => boolean) => [...f.after].some(([ref, oid]) => family(ref) && f.before.get(ref) !== oid) || [...f.before.keys()].some((ref) => family(ref) && !f.after.has(ref));
  const changed = moved((ref) => ref.startsWith(TASK_FAMILY));
  if (!changed && !moved(() => true)) return { ok: true, changed: false };
  const step = await integrate(store, f.before, f.after);
  if (step.conflicts.length) await recordConflicts(store, step.conflicts);
  return { ok: true, changed };
}

/** The look by listing first: the queue's families in one advertisement, then a fetch of just what moved. */
async function listThenFetch(store: Store, remote: string): Promise<QueueLook> {
  const budget = await remoteBudget(store, remote);
  const ls = await lsRemoteFamilies(store.cwd, remote, QUEUE_FAMILIES, callTimeout(budget), store.remoteSource);
  if (!ls.ok) return ls;
  const tracked = await trackingTipsOf(store, remote, QUEUE_FAMILIES);
  if (![...ls.tips].some(([ref, oid]) => ref.startsWith(TASK_FAMILY) && tracked.get(ref) !== oid)) return { ok: true, changed: false };
  const f = await refreshFamilies(store, remote, QUEUE_FAMILIES, ls.tips, budget, tracked);
  if (f.ok) {
    const step = await integrate(store, f.before, f.after);
    if (step.conflicts.length) await recordConflicts(store, step.conflicts);
    return { ok: true, changed: true };
  }
  if (!f.whole) return { ok: false, message: f.message };
  if (!store.remoteGate) return { ok: false, message: "this store was opened without the sync layer" };
  const r = await store.remoteGate.refresh(store, remote);
  return r.ok ? { ok: true, changed: true } : { ok: false, message: (r as { message?: string }).message ?? "the remote could not be fetched" };
}

function readStamp(path: string): Stamp | null {
  try {
    const s = JSON.parse(readTextNoFollow(path) ?? "null") as Partial<Stamp>;
    return typeof s.started === "number" && typeof s.ok === "boolean" ? { started: s.started, ok: s.ok, ...(typeof s.message === "string" ? { message: s.message } : {}) } : null;
  } catch {
    return null;
  }
}

