// One local write of the shared lease set, laid on the set another clone pushed meanwhile. Every
// agent writes the one lease ref, so a write cannot keep its own tree on top of the remote line (that
// dropped the other clones' leases, and granted an exclusive lease twice): it is replayed as what it
// changed. The leases it added are added again only where no live lease of another agent now
// clashes (the same check a lease operation makes, with the same takeover grace; validation on
// receive repeats it by the writer's clock); the leases it removed go, its actor's own whatever
// became of them, another agent's only as it was then or once it has run out here too, grace
// included (a sweep must not take a lease its holder renewed meanwhile). A task's
// lease follows where its task ends up: for a task finished once the sync is done (cancelled in one
// clone while its holder renewed in another), the write's lease is not added again, and the one it
// removed goes whatever became of it, or the finished task would hold its scope for a whole TTL. Pure.
import { isLeaseLiveFor, type Lease, type LeaseSet } from "./lease.ts";
import { findConflicts } from "./lease-ops.ts";
import { GRANT_MATCH_BUDGET, newMatchBudget } from "./match-budget.ts";
import { sortLeases } from "./lease-order.ts";

export interface ReplayedLeaseWrite {
  record: LeaseSet;
  /**
   * Leases the write added that a live lease of another agent now clashes with: not added. `unchecked`:
   * not compared with `clash` within the budget of matching, so not proved free (too_costly).
   */
  refused: { lease: Lease; clash: Lease; unchecked?: true }[];
}

const keyOf = (l: Lease) => `${l.agent}\u0000${l.pattern}`;
const textOf = (l: Lease) => JSON.stringify(l);

/** The tasks whose leases a write added, changed or removed: the only ones its replay asks about. */
export function tasksTouched(parent: LeaseSet, written: LeaseSet): Set<string> {
  const before = new Set(parent.leases.map(textOf));
  const after = new Set(written.leases.map(textOf));
  const changed = [...written.leases.filter((l) => !before.has(textOf(l))), ...parent.leases.filter((l) => !after.has(textOf(l)))];
  return new Set(changed.flatMap((l) => (l.task === null ? [] : [l.task])));
}

/**
 * `written` was made from `parent` by `actor`'s operation; it lands on `onto` at `now` (the write's
 * time, or later: never before what it lands on). `finished`: the tasks that are finished where the
 * sync converges. Their leases are left out silently: the task's own replay says what no longer applied.
 * `graceMs`: the takeover grace of this clone's writes (clock-skew.ts): another agent's lease expired
 * by this clock still stands for it, against a lease added and against a sweep alike, as it would
 * have if it had arrived here before the write was made.
 */
export function replayLeaseWrite(
  onto: LeaseSet,
  parent: LeaseSet,
  written: LeaseSet,
  actor: string,
  now: Date,
  finished: ReadonlySet<string> = new Set(),
  graceMs = 0,
): ReplayedLeaseWrite {
  const ended = (l: Lease) => l.task !== null && finished.has(l.task);
  const before = new Set(parent.leases.map(textOf));
  const after = new Set(written.leases.map(textOf));
  const added = written.leases.filter((l) => !before.has(textOf(l)));
  const addedKeys = new Set(added.map(keyOf));
  const removed = new Map(parent.leases.filter((l) => !after.has(textOf(l)) && !addedKeys.has(keyOf(l))).map((l) => [keyOf(l), l]));
  const work = newMatchBudget(GRANT_MATCH_BUDGET);
  let next = onto.leases.filter((l) => {
    const gone = removed.get(keyOf(l));
    return !gone || !(l.agent === actor || textOf(l) === textOf(gone) || !isLeaseLiveFor(l, now, actor, graceMs) || ended(l));
  });
  const refused: ReplayedLeaseWrite["refused"] = [];
  for (const lease of added) {
    if (ended(lease)) continue;
    // A lease of the same holder and pattern is the one this write renewed or changed: replaced.
    const others = next.filter((l) => keyOf(l) !== keyOf(lease));
    // Within a grant's budget: a lease it cannot compare with another agent's is not added.
    const found = findConflicts(others, lease.agent, [lease.pattern], lease.exclusive, now, graceMs, work);
    const clash = found.conflicts[0] ?? found.unchecked[0];
    if (clash) refused.push({ lease, clash: clash.lease, ...(found.conflicts.length ? {} : { unchecked: true as const }) });
    else next = [...others, lease];
  }
  return { record: { ...written, leases: sortLeases(next) }, refused };
}
