// The task records a readiness check read for the candidate `claim --next` takes, each with the tip
// the listing read it at, so that the claim rests on them (rests-on.ts): through a sync remote a
// dependency's `done` made here and not pushed yet goes out with the claim, and a dependency the
// remote moved meanwhile makes the claim count for nothing. A candidate whose check reads no
// record (no dependencies) rests on nothing and costs nothing.
import type { RefTip } from "../git/refs.ts";
import { ReadMoved } from "./rests-on.ts";
import { TASKS_PREFIX } from "./store.ts";
import type { TaskLookup } from "./task-store.ts";

export class CheckReads {
  /** While a decision is noted: what it read so far. */
  private noting: Map<string, string> | null = null;
  /** While a decision is made again inside the compare-and-swap: what the claim rests on. */
  private resting: ReadonlyMap<string, string> | null = null;

  /** `lookup` (the records of the listing read from `tips`) with its reads seen. */
  watch(lookup: TaskLookup, tips: readonly RefTip[]): TaskLookup {
    return {
      get: (id) => {
        const ref = TASKS_PREFIX + id;
        if (this.noting) {
          // Only the chosen candidate's check is noted: a search of the tips per dependency read.
          const tip = tips.find((t) => t.name === ref)?.oid;
          if (tip) this.noting.set(ref, tip);
        } else if (this.resting && !this.resting.has(ref)) {
          // The task gained a dependency since it was chosen: a record the claim does not rest on.
          throw new ReadMoved(ref);
        }
        return lookup.get(id);
      },
    };
  }

  /** The records `decide` reads through a watched lookup, by ref, with their tips. */
  of(decide: () => unknown): Map<string, string> {
    this.noting = new Map();
    try {
      decide();
      return this.noting;
    } finally {
      this.noting = null;
    }
  }

  /** `decide` again, refused (ReadMoved) if it reads a record that is not among `reads`. */
  within<T>(reads: ReadonlyMap<string, string>, decide: () => T): T {
    this.resting = reads;
    try {
      return decide();
    } finally {
      this.resting = null;
    }
  }
}
