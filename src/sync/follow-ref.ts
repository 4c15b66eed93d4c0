// Following one ref of the sync remote cheaply: ask for exactly that ref (one small
// advertisement), fetch only when its value changed, and apply it here. Callers poll with
// `Backoff`: quick right after a change, slower while nothing happens.
import { fetchHandoffRefs } from "../git/remote.ts";
import { lsRemoteRef } from "../git/remote-ref.ts";
import type { Store } from "../store/store.ts";
import { integrate } from "./integrate.ts";
import { trackingFor } from "./tracking.ts";

export type Pulled = { ok: true; changed: boolean } | { ok: false; message: string };

/** Brings `ref` up to the remote's value; `changed` when the local ref moved. */
export async function pullRef(store: Store, remote: string, ref: string): Promise<Pulled> {
  const ls = await lsRemoteRef(store.cwd, remote, ref);
  if (!ls.ok) return ls;
  const before = (await trackingFor(store, remote, [ref])).get(ref) ?? null;
  const local = await store.readRef(ref);
  if (ls.oid === before && (ls.oid === null || ls.oid === local)) return { ok: true, changed: false };
  if (ls.oid !== null && ls.oid !== before) {
    const f = await fetchHandoffRefs(store.cwd, remote, [ref]);
    if (!f.ok) return f;
  }
  const after = (await trackingFor(store, remote, [ref])).get(ref) ?? null;
  if (after === null) return { ok: true, changed: false }; // not on the remote (yet)
  await integrate(store, new Map(before ? [[ref, before]] : []), new Map([[ref, after]]));
  return { ok: true, changed: (await store.readRef(ref)) !== local };
}

/** Poll intervals from 250 ms doubling to 2 s while nothing changes; back to the start on a change. */
export class Backoff {
  private next: number;
  constructor(private readonly first = 250, private readonly max = 2000) {
    this.next = first;
  }
  reset(): void {
    this.next = this.first;
  }
  /** The next interval to wait. */
  take(): number {
    const ms = this.next;
    this.next = Math.min(this.max, this.next * 2);
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
