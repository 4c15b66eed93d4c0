// Following one ref of the sync remote cheaply. In a clone of a few hundred tasks or fewer: one
// `git fetch` of exactly that ref. Over protocol v2 a fetch first asks for the refs under the name
// it was given (`ls-refs` with that `ref-prefix`: one small advertisement), and sends a fetch
// request only when a value differs from the tracking ref: with nothing new it costs about what an
// `ls-remote` of the ref costs, and when the ref moved it saves the second connection that listing
// first and fetching then would take. In a larger clone (tracking.ts FETCH_FIRST_MAX_TASKS), where
// a fetch's own check against every local ref outweighs that connection: an `ls-remote` of exactly
// that ref, and a fetch only when it moved.
// Callers poll with `Backoff`: quick right after a change, slower while nothing happens.
// Processes that wait share one poller per clone (shared-poll.ts) on top of this.
import { inflateSync } from "node:zlib";
import { fetchHandoffRefs } from "../git/fetch-refs.ts";
import { placeOf } from "../store/ref-families.ts";
import { validateReceived } from "./validate-receive.ts";
import type { Store } from "../store/store.ts";
import { integrate } from "./integrate.ts";
import { trace } from "./trace.ts";
import { lsRemoteRefs } from "../git/remote-ref.ts";
import { fetchNamed } from "./named-fetch.ts";
import { fetchFirst } from "./fetch-first.ts";
import { ownTips } from "./own-tips.ts";
import { screenFetched } from "./screen-received.ts";
import { trackingFor, trackingMatching, type Tips } from "./tracking.ts";
import { callTimeout, remoteBudget, type RemoteBudget } from "./remote-budget.ts";
import { forgetMovedRemote } from "./tracking-identity.ts";

/** `refused`: refs whose remote value failed validation on receive (kept out of refs/handoff/), with why. */
export type Pulled = { ok: true; changed: boolean; refused?: { ref: string; reason: string }[] } | { ok: false; message: string };

/** Brings `ref` up to the remote's value; `changed` when the local ref moved. */
export function pullRef(store: Store, remote: string, ref: string): Promise<Pulled> {
  return pullRefs(store, remote, [ref]);
}

/**
 * Brings these refs up to the remote's values with one fetch; `changed` when a local ref moved.
 * A ref the remote lacks is left alone. Each is fetched as the pattern `<ref>*`, because a fetch
 * of an exact name the remote lacks fails as a whole (a result's ref before the task is done);
 * the other refs such a pattern matches come along and are judged and applied like the rest.
 * `signal` aborted (a waiter's deadline, Ctrl-C) ends the call in flight as its deadline would.
 */
export async function pullRefs(store: Store, remote: string, refs: string[], signal?: AbortSignal): Promise<Pulled> {
  await forgetMovedRemote(store, remote);
  const budget = await remoteBudget(store, remote);
  if (!(await fetchFirst(store, remote))) return listThenPull(store, remote, refs, budget, signal);
  const before = await trackingMatching(store, remote, refs);
  const haves = await ownTips(store, [...new Set([...refs, ...before.keys()])], before);
  trace("pull: fetching");
  const f = await fetchHandoffRefs(store.storeCwd, remote, callTimeout(budget), refs.map((r) => `${r}*`), { haves, ...(signal ? { signal } : {}) });
  trace("pull: fetched");
  // A pattern also matches refs this pull did not ask for, one of which the remote may not be able
  // to send (tracking.ts fetchAlone): the refs asked for, listed and fetched by name, get past it.
  if (!f.ok) return f.timedOut ? f : listThenPull(store, remote, refs, budget, signal);
  const after = await trackingMatching(store, remote, refs);
  const behind: string[] = [];
  const local = new Map<string, string | null>();
  for (const [ref, oid] of after) {
    const here = await store.readRef(ref);
    local.set(ref, here);
    if (here !== oid) behind.push(ref);
  }
  return applyBehind(store, remote, refs, behind, local, before, after);
}

/** pullRefs by listing first: one advertisement of exactly these refs, a fetch only of those that moved. */
async function listThenPull(store: Store, remote: string, refs: string[], budget: RemoteBudget, signal?: AbortSignal): Promise<Pulled> {
  const ls = await lsRemoteRefs(store.cwd, remote, refs, callTimeout(budget), store.remoteSource, signal);
  if (!ls.ok) return ls;
  const before = await trackingFor(store, remote, refs);
  const local = new Map<string, string | null>();
  for (const ref of refs) local.set(ref, await store.readRef(ref));
  const moved = refs.filter((r) => ls.tips.has(r) && ls.tips.get(r) !== before.get(r));
  const behind = refs.filter((r) => ls.tips.has(r) && ls.tips.get(r) !== local.get(r));
  if (!behind.length) return { ok: true, changed: false };
  if (moved.length) {
    const f = await fetchNamed(store, remote, moved, ls.tips, before, await ownTips(store, moved, before), () => callTimeout(budget), signal);
    if (!f.ok) return f;
  }
  return applyBehind(store, remote, refs, behind, local, before, await trackingFor(store, remote, behind));
}

/**
 * Applies the tracking refs in `behind` (local differs from them) from `before` to `after`, once
 * they pass the same validation as a sync; `changed` when one of `asked` moved here.
 */
async function applyBehind(store: Store, remote: string, asked: string[], behind: string[], local: Map<string, string | null>, before: Tips, after: Tips): Promise<Pulled> {
  if (!behind.length) return { ok: true, changed: false };
  const only = (tips: Tips) => new Map([...tips].filter(([r]) => behind.includes(r)));
  const screened = await screenFetched(store, remote, only(before), only(after));
  trace("pull: screened");
  await integrate(store, screened.before, screened.after);
  trace("pull: integrated");
  let changed = false;
  for (const ref of behind) if (asked.includes(ref) && (await store.readRef(ref)) !== local.get(ref)) changed = true;
  return { ok: true, changed, refused: screened.refused.map((q) => ({ ref: q.ref, reason: q.reason })) };
}

/**
 * Poll intervals from 250 ms growing by half to 2 s while nothing changes (doubling would make a
 * waiter notice a result up to twice as late as needed); back to the start on a change. With
 * `steadyMs`, the intervals stay at the first for that long after a change (and from the start
 * with `steadyFromStart`): right after something happened, the next step is likely soon (a
 * worker claims a task just pushed, and may finish it a moment later).
 */
export class Backoff {
  private next: number;
  private steadyUntil: number;
  constructor(
    private readonly first = 250,
    private readonly max = 2000,
    private readonly steadyMs = 0,
    steadyFromStart = false,
    private readonly clock: () => number = Date.now,
  ) {
    this.next = first;
    this.steadyUntil = steadyFromStart ? clock() + steadyMs : 0;
  }
  reset(): void {
    this.next = this.first;
    this.steadyUntil = this.clock() + this.steadyMs;
  }
  /** The next interval to wait. */
  take(): number {
    if (this.clock() < this.steadyUntil) return this.first;
    const ms = this.next;
    this.next = Math.min(this.max, Math.round(this.next * 1.5));
    return ms;
  }
}

/** Sleeps `ms`, or less when `signal` fires. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** An empty zlib stream: inflating it loads node:zlib (git's own loose objects are deflated). */
const EMPTY_ZLIB = Buffer.from([0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]);

/**
 * Readies this process to receive `refs` while it has nothing else to do (a waiter between its
 * push and its first look): the first received record otherwise pays, on the way to the answer,
 * for loading node:zlib, building its family's schema and the first run of the checks. Validates
 * the refs' local tips as a receive would and throws nothing away: the verdicts are not used.
 */
export async function readyToReceive(store: Store, refs: string[]): Promise<void> {
  try {
    inflateSync(EMPTY_ZLIB);
    for (const ref of refs) {
      const place = placeOf(ref);
      if (place.kind !== "known") continue;
      place.family.schema?.safeParse(null);
      const tip = await store.readRef(ref);
      if (tip) await validateReceived(store, ref, tip, null, store.now());
    }
  } catch {
    /* a warm-up never fails the work */
  }
}
