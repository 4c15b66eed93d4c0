// Idle workers of one clone share their look at the remote. A worker with nothing to do asks,
// every poll interval, whether a task it may take has appeared: a refresh of refs/handoff/* (one
// ref listing, a fetch only of what moved). With several workers in a clone, each asking on its
// own multiplies the reads the host sees. Here a refresh leaves a stamp (when it started, whether
// it worked) in .git/handoff/refresh-<remote>.json; a worker that finds one started within its
// poll interval takes that look instead of making its own, and one refresh at a time runs per
// clone (an owned lock: a holder that is gone is broken at once). A worker then claims only when
// this clone has a ready task for it, so an idle poll costs at most one listing per clone.
import { randomBytes } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { acquireOwnedLock } from "../git/owned-lock.ts";
import { listReady } from "../store/dependency-actions.ts";
import type { Store } from "../store/store.ts";
import { callTimeout, remoteBudget } from "./remote-budget.ts";
import { fetchLockDir } from "./tracking.ts";

interface Stamp {
  started: number;
  ok: boolean;
}

export function refreshPaths(store: Store, remote: string): { lock: string; stamp: string } {
  const dir = fetchLockDir(store);
  const name = encodeURIComponent(remote);
  return { lock: join(dir, `refresh-${name}.lock`), stamp: join(dir, `refresh-${name}.json`) };
}

/**
 * This clone's state as fresh as `maxAgeMs`: a refresh by this process, or by another of the
 * clone that started no longer ago than that. `shared`: another process's look was taken.
 */
export async function sharedRefresh(store: Store, remote: string, maxAgeMs: number): Promise<{ ok: boolean; shared: boolean }> {
  const paths = refreshPaths(store, remote);
  const fresh = (s: Stamp | null): s is Stamp => !!s && s.ok && s.started >= Date.now() - maxAgeMs;
  if (fresh(readStamp(paths.stamp))) return { ok: true, shared: true };
  const budget = await remoteBudget(store, remote);
  const got = await acquireOwnedLock(paths.lock, Date.now() + 2 * callTimeout(budget) + 1000);
  if (!got.ok) return { ok: false, shared: false };
  try {
    // Another process refreshed while this one waited for the lock: take its look.
    if (fresh(readStamp(paths.stamp))) return { ok: true, shared: true };
    const started = Date.now();
    const r = await store.remoteGate!.refresh(store, remote);
    writeAtomic(paths.stamp, JSON.stringify({ started, ok: r.ok } satisfies Stamp));
    return { ok: r.ok, shared: false };
  } finally {
    got.release();
  }
}

/**
 * Whether an idle worker should try a claim now: after a look at the remote no older than
 * `maxAgeMs` (shared with the clone's other workers), this clone has a task ready for it. A
 * remote that cannot be read leaves the decision to the claim, which says what is wrong.
 */
export async function readyAfterSharedLook(store: Store, remote: string, maxAgeMs: number): Promise<boolean> {
  if (!store.remoteGate) return true;
  const r = await sharedRefresh(store, remote, maxAgeMs);
  if (!r.ok) return true;
  return (await listReady(store)).ready.length > 0;
}

function readStamp(path: string): Stamp | null {
  try {
    const s = JSON.parse(readFileSync(path, "utf8")) as Partial<Stamp>;
    return typeof s.started === "number" && typeof s.ok === "boolean" ? { started: s.started, ok: s.ok } : null;
  } catch {
    return null;
  }
}

function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.${process.pid}-${randomBytes(3).toString("hex")}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}
