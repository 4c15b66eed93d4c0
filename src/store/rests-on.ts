// A write whose decision rests on refs it does not change (a claim on its dependencies' records):
// the same transaction checks that each still holds the value the decision read, here and, through
// the sync remote, there too. The remote's copy is leased like a written ref: its value there must
// still be the one last fetched, and the local value goes out in the same atomic push, so a
// dependency's `done` not yet pushed either lands with the claim or the claim does not count.
import type { RefUpdate } from "../git/refs.ts";
import type { Attempt, Store } from "./store.ts";

/** A ref the decision read has moved here since: the caller reads again and decides again. */
export class ReadMoved extends Error {
  constructor(readonly ref: string) {
    super(`${ref} moved since it was read`);
  }
}

/** `attempt`, its updates extended by a check that each ref of `reads` still holds the value read. */
export function restingOn<R>(store: Store, attempt: Attempt<R>, reads: ReadonlyMap<string, string>): Attempt<R> {
  return async (now) => {
    const out = await attempt(now);
    if (!out.updates.length) return out;
    const checks: RefUpdate[] = [];
    for (const [ref, tip] of reads) {
      if (out.updates.some((u) => u.ref === ref)) continue;
      // Moved here (a refresh applied the remote's copy): deciding on the old value would not count.
      if ((await store.readRef(ref)) !== tip) throw new ReadMoved(ref);
      checks.push({ ref, old: tip, new: tip });
    }
    return { updates: [...out.updates, ...checks], result: out.result };
  };
}
