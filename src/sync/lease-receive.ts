// Validate on receive, the lease set (refs/handoff/leases, exclusivity's one ref): each commit adds
// only its author's own leases, none overlapping another agent's live lease, and removes another
// agent's live lease only by an operation that ends it.
import type { HandoffEvent } from "../core/event.ts";
import { findConflicts } from "../core/lease-ops.ts";
import { isLeaseLive, type Lease, type LeaseSet } from "../core/lease.ts";
import { RECEIVE_MATCH_BUDGET, type MatchBudget } from "../core/match-budget.ts";
import { invalid } from "./receive-refusal.ts";
import type { Entry } from "./received-entry.ts";
import { groupDigits } from "../core/digits.ts";

/** Lease set commit `e` is a legal operation on `parent`'s set, within `budget`. */
export function checkLeaseStep(e: Entry, parent: Entry, budget: MatchBudget): void {
  const ev = e.event!;
  const actor = ev.by ?? ev.agent;
  const now = new Date(Date.parse(ev.at));
  const before = (parent.record as LeaseSet).leases;
  const seen = new Set(before.map((l) => JSON.stringify(l)));
  // Read once for every new lease: the leases near each one are looked up in it (lease-groups.ts).
  const others = before.filter((o: Lease) => o.agent !== actor && isLeaseLive(o, now));
  const after = (e.record as LeaseSet).leases;
  for (const l of after) {
    if (seen.has(JSON.stringify(l))) continue;
    if (l.agent !== actor) invalid(`${actor} wrote a lease of ${l.agent} on ${JSON.stringify(l.pattern)}`);
    const found = findConflicts(others, actor, [l.pattern], l.exclusive, now, 0, budget);
    const clash = found.conflicts[0];
    if (!clash && found.unchecked.length) {
      const u = found.unchecked[0]!.lease;
      invalid(`${actor}'s lease on ${JSON.stringify(l.pattern.slice(0, 80))} is too costly to check against the live leases: comparing it with ${u.agent}'s lease on ${JSON.stringify(u.pattern.slice(0, 80))} went past the budget of glob matching one received ref may do (${groupDigits(RECEIVE_MATCH_BUDGET)} units)`);
    }
    if (clash) invalid(`${actor}'s ${l.exclusive ? "exclusive " : ""}lease on ${JSON.stringify(l.pattern)} overlaps ${clash.lease.agent}'s live lease on ${JSON.stringify(clash.lease.pattern)}`);
  }
  // Another agent's live lease may end only by an operation that ends it: its task's (released,
  // finished, taken over), a forced release naming it, or the sweep of a silent agent. A set
  // written over another without replaying it (an older build's sync did) dropped live leases of
  // others, and the next clone granted an exclusive lease on what another agent still held.
  const kept = new Set(after.map((l) => leaseKey(l)));
  for (const l of others) {
    if (kept.has(leaseKey(l)) || mayEnd(ev, l)) continue;
    invalid(`${ev.type} by ${actor} removed ${l.agent}'s live lease on ${JSON.stringify(l.pattern)}`);
  }
}

/** A lease as who holds what for which task: a renewal keeps it, an end removes it. */
function leaseKey(l: Lease): string {
  return JSON.stringify([l.agent, l.pattern, l.task, l.exclusive]);
}

/** Whether event `ev` is one that may end `l`, another agent's live lease. */
function mayEnd(ev: HandoffEvent, l: Lease): boolean {
  if (ev.type === "unleased") return (!!ev.task && l.task === ev.task) || (!ev.task && ev.holder === l.agent);
  if (ev.type === "lease_reclaimed") return (ev.paths ?? []).includes(l.pattern) && (ev.holder ?? "").split(", ").includes(l.agent);
  return false;
}
