// The order a lease set is stored and shown in: by pattern, then holder, as localeCompare orders
// them (text-order.ts). Every write used to sort the whole set again to place the one or two
// leases it adds: at 1,000 live leases that sort was ~1,000 comparisons of long, alike patterns,
// about 0.1 ms of a claim. A set known to be in order (one this process sorted, or a reader
// sorted) takes new leases by binary search instead. Pure; the knowledge is kept by array
// identity, and lease arrays are never mutated once built.
import type { Lease } from "./lease.ts";
import { textOrder } from "./text-order.ts";
import { upperBound } from "./upper-bound.ts";

export function leaseOrder(a: Lease, b: Lease): number {
  return textOrder(a.pattern, b.pattern) || textOrder(a.agent, b.agent);
}

/** Arrays known to be in leaseOrder. A record read from elsewhere is not (another locale wrote it). */
const ordered = new WeakSet<readonly Lease[]>();

/**
 * The set each ordered set was derived from by an order-keeping step, so that what is kept per
 * set (lease-groups.ts) can be patched from its parent's instead of built again.
 */
const parents = new WeakMap<readonly Lease[], { from: readonly Lease[]; depth: number }>();

/** Links are kept at most this deep: a set holds its ancestors alive while it is. */
const MAX_DEPTH = 8;

function derivedFrom(from: readonly Lease[], to: readonly Lease[]): void {
  if (from === to || !ordered.has(from) || !ordered.has(to)) return;
  const depth = (parents.get(from)?.depth ?? 0) + 1;
  if (depth <= MAX_DEPTH) parents.set(to, { from, depth });
}

/** The ordered set `leases` (ordered too) was derived from, if known. */
export function orderedParent(leases: readonly Lease[]): readonly Lease[] | undefined {
  return parents.get(leases)?.from;
}

/** Ends the link of `leases` to its parent (whoever used it keeps what it derived). */
export function forgetParent(leases: readonly Lease[]): void {
  parents.delete(leases);
}

/** `leases`, sorted into a new array known to be in order. */
export function sortLeases(leases: readonly Lease[]): Lease[] {
  const out = [...leases].sort(leaseOrder);
  ordered.add(out);
  return out;
}

/**
 * `to`, derived from `from` by steps that keep the order (filter, a map that changes no pattern
 * or holder): known to be in order when `from` is.
 */
export function keepOrder(from: readonly Lease[], to: Lease[]): Lease[] {
  if (ordered.has(from)) ordered.add(to);
  derivedFrom(from, to);
  return to;
}

export function isInLeaseOrder(leases: readonly Lease[]): boolean {
  return ordered.has(leases);
}

/** `leases` with `added` placed in order: by binary search when `leases` is known to be in order. */
export function withLeases(leases: readonly Lease[], added: readonly Lease[]): Lease[] {
  if (!ordered.has(leases)) return sortLeases([...leases, ...added]);
  // With something added, insertInOrder answers a new array.
  const out = added.length ? (insertInOrder(leases, added) as Lease[]) : [...leases];
  ordered.add(out);
  derivedFrom(leases, out);
  return out;
}

/**
 * `sorted` (in lease order) with `more` put in place, each found by a binary search and the rest
 * copied in runs: a few leases added to a list of a thousand cost no sort of it. `sorted` itself
 * when there is nothing to add.
 */
export function insertInOrder<T extends readonly Lease[]>(sorted: T, more: readonly Lease[]): T | Lease[] {
  if (!more.length) return sorted;
  const adds = more.length > 1 ? [...more].sort(leaseOrder) : more;
  const out: Lease[] = [];
  let from = 0;
  for (const l of adds) {
    const lo = upperBound(sorted, l, leaseOrder, from);
    for (let i = from; i < lo; i++) out.push(sorted[i]!);
    out.push(l);
    from = lo;
  }
  for (let i = from; i < sorted.length; i++) out.push(sorted[i]!);
  return out;
}
