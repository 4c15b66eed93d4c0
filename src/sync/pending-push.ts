// Writes that need not go out at once (renewals, heartbeats of a clone that pushes its writes):
// applied here at once, queued, and pushed together in ONE atomic push when the push budget
// allows (push-budget.ts), or earlier, carried by the next push that cannot wait (an exclusive
// grant, a completion someone waits on). The queue is a folder of empty files, one per ref
// (.git/handoff/pending-<remote>/<ref, encoded>): adding is idempotent and needs no lock, and the
// ref's value is read when the push is built, so a ref written five times goes out once.
// Nothing is lost when a push fails: the local refs keep the writes, the queue keeps the names,
// and `git handoff sync` pushes whatever is ahead of the remote anyway.
import { readdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { updateRefs } from "../git/refs.ts";
import { createExclusive, isFolder, ownFolder, readTextNoFollow, replaceFile } from "../git/safe-file.ts";
import { pushWithLease, type PushUpdate } from "../git/push-lease.ts";
import { trackingRef } from "../git/tracking-ref.ts";
import { isAncestor } from "../store/history.ts";
import type { Store } from "../store/store.ts";
import { pushBudget } from "./push-budget.ts";
import { callTimeout, remoteBudget } from "./remote-budget.ts";
import { trackingFor } from "./tracking.ts";
import { carriesEdges } from "./dependency-cycles.ts";

export function pendingDir(store: Store, remote: string): string {
  return join(store.repo.commonDir, "handoff", `pending-${encodeURIComponent(remote)}`);
}

/**
 * Queues these writes for the next push to `remote`. The entry keeps the value the first queued
 * write was built on: the push may replace the remote's copy only if that is what it still holds.
 */
export function queuePending(store: Store, remote: string, updates: { ref: string; old: string | null }[]): void {
  const dir = pendingDir(store, remote);
  ownFolder(dir);
  for (const u of updates) {
    try {
      createExclusive(join(dir, encodeURIComponent(u.ref)), u.old ?? "");
    } catch {
      /* queued already: the base of its first write stands */
    }
  }
}

/** The refs queued for `remote`, with the value their first queued write was built on. */
export function queued(store: Store, remote: string): Map<string, string | null> {
  const dir = pendingDir(store, remote);
  const out = new Map<string, string | null>();
  let names: string[];
  try {
    // Only a folder of our own is listed (and its names unqueued), never one a link names.
    if (!isFolder(dir)) return out;
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const n of names.sort()) {
    const ref = decodeURIComponent(n);
    if (!ref.startsWith("refs/handoff/")) continue;
    const base = readTextNoFollow(join(dir, n));
    if (base !== null) out.set(ref, base.trim() || null); // else pushed and removed meanwhile
  }
  return out;
}

export function queuedRefs(store: Store, remote: string): string[] {
  return [...queued(store, remote).keys()];
}

function unqueue(store: Store, remote: string, refs: string[]): void {
  for (const ref of refs) {
    try {
      unlinkSync(join(pendingDir(store, remote), encodeURIComponent(ref)));
    } catch {
      /* already gone */
    }
  }
}

/**
 * The queued refs as push leases: each local value over what the remote had when last seen. A ref
 * already on the remote leaves the queue; one whose remote copy moved elsewhere (the local value
 * is not a descendant of it) stays for `sync`, which replays it on top, and so does one carrying a
 * dependency made here (dependency-cycles.ts). `except`: refs the caller pushes itself.
 */
export async function pendingLeases(store: Store, remote: string, except: string[] = []): Promise<PushUpdate[]> {
  const q = [...queued(store, remote)].filter(([r]) => !except.includes(r));
  if (!q.length) return [];
  const tracking = await trackingFor(store, remote, q.map(([r]) => r));
  const out: PushUpdate[] = [];
  const landed: string[] = [];
  for (const [ref, base] of q) {
    const local = await store.readRef(ref);
    const seen = tracking.get(ref) ?? null;
    if (local === null || local === seen) {
      landed.push(ref);
      continue;
    }
    // The remote moved past what the write was built on: sync replays it on top instead.
    if (seen !== base && !(seen !== null && base !== null && (await isAncestor(store, seen, base, ref).catch(() => false)))) continue;
    // It carries a dependency made here that never met the remote's graph: sync lays it on it first.
    if (await carriesEdges(store, [{ ref, local, expected: seen }])) continue;
    out.push({ ref, new: local, expected: seen });
  }
  unqueue(store, remote, landed);
  return out;
}

/** After a push that carried these leases landed: the tracking refs say so and the queue forgets them. */
export async function settleCarried(store: Store, remote: string, carried: PushUpdate[]): Promise<void> {
  if (!carried.length) return;
  await updateRefs(store.storeCwd, carried.map((l) => ({ ref: trackingRef(remote, l.ref), new: l.new, old: l.expected })), store.zeroOid);
  const done: string[] = [];
  for (const l of carried) {
    if ((await store.readRef(l.ref)) === l.new) done.push(l.ref);
    // Written again meanwhile: that newer write stays queued, built on what just landed.
    else replaceFile(join(pendingDir(store, remote), encodeURIComponent(l.ref)), l.new ?? "");
  }
  unqueue(store, remote, done);
}

export type Flush =
  | { kind: "none" }
  | { kind: "pushed"; refs: string[] }
  /** The budget is spent: nothing was sent; `at` (store clock, epoch ms) is when it frees. */
  | { kind: "deferred"; at: number; refs: string[] }
  /** The push went out and did not land, or could not be sent: everything stays queued. */
  | { kind: "failed"; message: string; refs: string[] };

/**
 * Pushes everything queued for `remote` in one atomic push, if the budget allows (`urgent`: even
 * if it does not). Every ref lands or none does; on failure the queue is left as it was.
 */
export async function flushPending(store: Store, remote: string, opts: { urgent?: boolean } = {}): Promise<Flush> {
  if (!queuedRefs(store, remote).length) return { kind: "none" };
  if (!opts.urgent) {
    const b = await pushBudget(store, remote);
    if (!b.allows) return { kind: "deferred", at: b.freeAt, refs: queuedRefs(store, remote) };
  }
  const leases = await pendingLeases(store, remote);
  if (!leases.length) return { kind: "none" };
  const refs = leases.map((l) => l.ref);
  const budget = await remoteBudget(store, remote);
  const push = await pushWithLease(store.storeCwd, remote, leases, callTimeout(budget), store.actor.agent, store.remoteSource);
  if (push.kind !== "done") return { kind: "failed", message: push.message, refs };
  if (![...push.status.values()].every((s) => s === "ok")) {
    const bad = leases.find((l) => push.status.get(l.ref) !== "ok")!;
    return { kind: "failed", message: `${bad.ref}: ${push.reasons.get(bad.ref) ?? push.status.get(bad.ref)}`, refs };
  }
  await settleCarried(store, remote, leases);
  return { kind: "pushed", refs };
}

const timers = new WeakMap<Store, NodeJS.Timeout>();

/**
 * A deferrable write landed here: queue it and push now if the budget allows; otherwise a timer
 * of this process pushes it once the budget frees (a long-running worker or server), or the next
 * push of the clone carries it (a one-shot command that exits first).
 */
export async function deferWrite(store: Store, remote: string, updates: { ref: string; old: string | null }[]): Promise<void> {
  queuePending(store, remote, updates);
  // The write itself has landed here: a push that cannot be made now is retried, never its error.
  const f = await flushPending(store, remote).catch((e: unknown): Flush => ({ kind: "failed", message: (e as Error).message, refs: [] }));
  if (f.kind === "deferred" && !timers.has(store)) {
    // The scripted clock does not advance: wait real time for the budget's window instead.
    const wait = Math.max(50, Math.min(60_000, f.at - store.now().getTime()));
    const t = setTimeout(() => {
      timers.delete(store);
      deferWrite(store, remote, []).catch(() => {});
    }, wait);
    t.unref();
    timers.set(store, t);
  }
}
