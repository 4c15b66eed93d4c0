// One local write of the shared lease set, laid on the set another clone pushed meanwhile. Every
// agent writes the one lease ref, so a write cannot keep its own tree on top of the remote line (that
// dropped the other clones' leases, and granted an exclusive lease twice): it is replayed as what it
// changed. The leases it added are added again only where no live lease of another agent now
// clashes (the same check a lease operation makes, and validation on receive repeats); the leases it
// removed go, its actor's own whatever became of them, another agent's only as it was then or once
// it has run out here too (a sweep must not take a lease its holder renewed meanwhile). Pure.
import { isLeaseLive, type Lease, type LeaseSet } from "./lease.ts";
import { findConflicts } from "./lease-ops.ts";
import { sortLeases } from "./lease-order.ts";

export interface ReplayedLeaseWrite {
  record: LeaseSet;
  /** Leases the write added that a live lease of another agent now clashes with: not added. */
  refused: { lease: Lease; clash: Lease }[];
}

const keyOf = (l: Lease) => `${l.agent}\u0000${l.pattern}`;
const textOf = (l: Lease) => JSON.stringify(l);

/**
 * `written` was made from `parent` by `actor`'s operation; it lands on `onto` at `now` (the write's
 * time, or later: never before what it lands on).
 */
export function replayLeaseWrite(onto: LeaseSet, parent: LeaseSet, written: LeaseSet, actor: string, now: Date): ReplayedLeaseWrite {
  const before = new Set(parent.leases.map(textOf));
  const after = new Set(written.leases.map(textOf));
  const added = written.leases.filter((l) => !before.has(textOf(l)));
  const addedKeys = new Set(added.map(keyOf));
  const removed = new Map(parent.leases.filter((l) => !after.has(textOf(l)) && !addedKeys.has(keyOf(l))).map((l) => [keyOf(l), l]));
  let next = onto.leases.filter((l) => {
    const gone = removed.get(keyOf(l));
    return !gone || !(l.agent === actor || textOf(l) === textOf(gone) || !isLeaseLive(l, now));
  });
  const refused: ReplayedLeaseWrite["refused"] = [];
  for (const lease of added) {
    // A lease of the same holder and pattern is the one this write renewed or changed: replaced.
    const others = next.filter((l) => keyOf(l) !== keyOf(lease));
    const clash = findConflicts(others, lease.agent, [lease.pattern], lease.exclusive, now)[0];
    if (clash) refused.push({ lease, clash: clash.lease });
    else next = [...others, lease];
  }
  return { record: { ...written, leases: sortLeases(next) }, refused };
}
