// The lease set of recent tips of refs/handoff/leases, in process. A commit id names its content,
// so an entry never goes stale: a long-running process (MCP server, dashboard, worker) reads a
// tip once, and its own writes enter the index as they are made, without being read back. A
// foreign tip costs only the prefix files that changed (lease-tree.ts keeps them by blob id).
import type { LeaseSet } from "../core/lease.ts";
import type { GroupCache, LeaseGroup } from "./lease-tree.ts";
import type { Store } from "./store.ts";

export interface IndexedLeases {
  set: LeaseSet;
  /** 1: one leases.json; 2: a tree of prefix files. */
  format: number;
  /** Format 2's prefix files with their blobs, when known (a write reuses the unchanged ones). */
  groups: Map<string, LeaseGroup> | null;
}

export class LeaseIndex {
  private readonly tips = new Map<string, IndexedLeases>();
  /** Parsed prefix files by blob id. */
  readonly groupCache: GroupCache = new Map();

  get(tip: string): IndexedLeases | undefined {
    const hit = this.tips.get(tip);
    if (hit) {
      // Most recently used last: the loop below evicts from the front.
      this.tips.delete(tip);
      this.tips.set(tip, hit);
    }
    return hit;
  }

  /** The entry used or added last: the set a new tip most likely differs from in a few files. */
  latest(): IndexedLeases | undefined {
    let last: IndexedLeases | undefined;
    for (const e of this.tips.values()) last = e;
    return last;
  }

  put(tip: string, entry: IndexedLeases): void {
    this.tips.delete(tip);
    this.tips.set(tip, entry);
    while (this.tips.size > TIPS_KEPT) this.tips.delete(this.tips.keys().next().value!);
  }
}

const TIPS_KEPT = 16;
const indexes = new WeakMap<Store, LeaseIndex>();

export function leaseIndexOf(store: Store): LeaseIndex {
  let idx = indexes.get(store);
  if (!idx) indexes.set(store, (idx = new LeaseIndex()));
  return idx;
}
