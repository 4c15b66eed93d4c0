// Leases grouped by the folder their pattern starts in. Two patterns whose first folders are
// different literal names match no common file, so a question about one pattern (who stands in
// the way of a claim's scope, which leases its advisory names) needs only the leases of that
// folder and the few that start with a glob: at 1,000 live leases over a hundred folders, a
// claim looked at every one of them two or three times (~0.2 ms of it). The lease tree files
// leases by the same key (store/lease-tree.ts). Pure; groups are kept by array identity, and
// lease arrays are never mutated once built.
import { expiryOf, type Lease } from "./lease.ts";
import { forgetParent, insertInOrder, isInLeaseOrder, leaseOrder, orderedParent } from "./lease-order.ts";
import { isGlob } from "./paths.ts";
import { SharedMap } from "./shared-map.ts";

/** The key a lease is grouped under: its first folder, or `*` for a root file or a glob-first pattern. */
export function groupKey(pattern: string): string {
  const slash = pattern.indexOf("/");
  if (slash <= 0) return "*";
  const first = pattern.slice(0, slash);
  return isGlob(first) ? "*" : first;
}

/** Each lease's key, by lease object. */
const keyOf = new WeakMap<Lease, string>();

export function leaseKey(l: Lease): string {
  let key = keyOf.get(l);
  if (key === undefined) keyOf.set(l, (key = groupKey(l.pattern)));
  return key;
}

/**
 * A key names its folder plainly unless it holds an escape or an extglob's parenthesis
 * (normalized input has neither, a record from another clone might): such a key may spell a
 * folder another key spells otherwise, so its leases are near every pattern.
 */
export function plainKey(key: string): boolean {
  return key !== "*" && !key.includes("\\") && !key.includes("(");
}

/**
 * Two keys (groupKey's) that are different plain folder names: their patterns name no common
 * file, whatever follows (what leasesNear relies on), so no glob of one needs matching against
 * the other.
 */
export function keysApart(a: string, b: string): boolean {
  return a !== b && plainKey(a) && plainKey(b);
}

interface Grouped {
  /** The leases of each key, in the set's order (the keys themselves in no order that matters). */
  byKey: Map<string, Lease[]>;
  /** The keys present that are near every pattern (`*`, or not plain). */
  odd: string[];
  /** The leases taken for each task, in the set's order (looked up only: shared between versions). */
  byTask: ReadonlyMap<string, Lease[]>;
  /** Each holder's leases, in the set's order (looked up only: shared between versions). */
  byAgent: ReadonlyMap<string, Lease[]>;
  /** No lease of the set expires before this (the earliest expiry, or less after a patch). */
  earliest: number;
}

const grouped = new WeakMap<readonly Lease[], Grouped>();

function groupsOf(leases: readonly Lease[]): Grouped {
  let g = grouped.get(leases);
  if (!g) {
    // A set derived (through a few order-keeping steps: settle, release, acquire, follow the
    // task) from one whose groups are known is patched from them.
    let from = orderedParent(leases);
    for (let n = 0; from && !grouped.has(from) && n < 8; n++) from = orderedParent(from);
    g = (from && grouped.has(from) && patched(grouped.get(from)!, from, leases)) || fresh(leases);
    grouped.set(leases, g);
    forgetParent(leases);
  }
  return g;
}

function push<K>(m: Map<K, Lease[]>, k: K, l: Lease): void {
  const list = m.get(k);
  if (list) list.push(l);
  else m.set(k, [l]);
}

/** The keys of `byKey` whose leases are near every pattern. */
function oddKeys(byKey: Map<string, Lease[]>): string[] {
  return [...byKey.keys()].filter((k) => !plainKey(k));
}

function fresh(leases: readonly Lease[]): Grouped {
  const byKey = new Map<string, Lease[]>();
  const byTask = new Map<string, Lease[]>();
  const byAgent = new Map<string, Lease[]>();
  let earliest = Infinity;
  for (const l of leases) {
    push(byKey, leaseKey(l), l);
    if (l.task !== null) push(byTask, l.task, l);
    push(byAgent, l.agent, l);
    earliest = Math.min(earliest, expiryOf(l));
  }
  if (isInLeaseOrder(leases)) for (const list of byKey.values()) orderedLists.add(list);
  return { byKey, odd: oddKeys(byKey), byTask, byAgent, earliest };
}

/** Folder lists known to be in lease order (those of a set in order, and every patched one). */
const orderedLists = new WeakSet<readonly Lease[]>();

/**
 * The groups of `next` from those of `prev`, both in lease order: one walk comparing objects
 * (a write keeps every lease it does not change), then only the lists whose leases changed are
 * built again, and the earliest expiry lowered by the added leases' (a lease gone can only raise
 * it: the old value stays a safe bound). Null when the two differ in many (a fresh grouping is as
 * cheap then).
 */
function patched(g: Grouped, prev: readonly Lease[], next: readonly Lease[]): Grouped | null {
  const gone = new Set<Lease>();
  const added: Lease[] = [];
  let i = 0;
  let j = 0;
  while (i < prev.length || j < next.length) {
    if (i < prev.length && j < next.length && prev[i] === next[j]) {
      i++;
      j++;
    } else if (j >= next.length) gone.add(prev[i++]!);
    else if (i >= prev.length) added.push(next[j++]!);
    else {
      const c = leaseOrder(prev[i]!, next[j]!);
      if (c <= 0) gone.add(prev[i++]!);
      if (c >= 0) added.push(next[j++]!);
    }
    if (gone.size + added.length > MAX_PATCH) return null;
  }
  // A folder's list records how it was patched, so that what is kept per list follows it.
  const byKey = repartition(g.byKey, gone, added, leaseKey, (before, list, put) => {
    orderedLists.add(list);
    listSteps.delete(before); // one step back only: no chain of old lists stays alive
    listSteps.set(list, { from: before, gone, added: put });
    // A folder indexed by second component stays indexed from write to write (a release
    // between two claims would otherwise leave the next claim to index it afresh).
    if (secondsIndex.has(before)) secondsOf(list);
  });
  let earliest = g.earliest;
  for (const l of added) earliest = Math.min(earliest, expiryOf(l));
  // The keys near every pattern change only where a lease of such a key came or went.
  let oddMoved = false;
  for (const l of gone) if (!plainKey(leaseKey(l))) oddMoved = true;
  for (const l of added) if (!plainKey(leaseKey(l))) oddMoved = true;
  const byTask = repartitionShared(g.byTask, gone, added, (l) => l.task ?? undefined);
  const byAgent = repartitionShared(g.byAgent, gone, added, (l) => l.agent);
  return { byKey, odd: oddMoved ? oddKeys(byKey) : g.odd, byTask, byAgent, earliest };
}

/**
 * A partition of leases (each part in lease order) after `gone` left and `added` joined: the parts
 * they touch built again, the few added put in place by binary search instead of the part sorted
 * again (a folder, an agent or a task of a thousand leases is patched at every write); the others
 * the very arrays before; an emptied part dropped. `partOf` undefined: in no part. `rebuilt` hears
 * of each part built again that is not empty, with the part before and the leases put in.
 */
export function repartition<K>(
  from: ReadonlyMap<K, Lease[]>,
  gone: ReadonlySet<Lease>,
  added: readonly Lease[],
  partOf: (l: Lease) => K | undefined,
  rebuilt?: (before: Lease[], part: Lease[], put: Lease[]) => void,
): Map<K, Lease[]> {
  const m = new Map(from);
  for (const [k, part] of changedParts(from, gone, added, partOf, rebuilt)) {
    if (part) m.set(k, part);
    else m.delete(k);
  }
  return m;
}

/**
 * repartition for parts that are only looked up, never walked (by task, by agent, by second
 * component): the parts before are shared, not copied (shared-map.ts).
 */
export function repartitionShared<K>(from: ReadonlyMap<K, Lease[]>, gone: ReadonlySet<Lease>, added: readonly Lease[], partOf: (l: Lease) => K | undefined): ReadonlyMap<K, Lease[]> {
  return SharedMap.of(from).with(changedParts(from, gone, added, partOf));
}

/** The parts the leases gone or added fall in, built again (undefined: emptied). */
function changedParts<K>(
  from: ReadonlyMap<K, Lease[]>,
  gone: ReadonlySet<Lease>,
  added: readonly Lease[],
  partOf: (l: Lease) => K | undefined,
  rebuilt?: (before: Lease[], part: Lease[], put: Lease[]) => void,
): Map<K, Lease[] | undefined> {
  const changed = new Set<K>();
  for (const l of gone) {
    const k = partOf(l);
    if (k !== undefined) changed.add(k);
  }
  for (const l of added) {
    const k = partOf(l);
    if (k !== undefined) changed.add(k);
  }
  const out = new Map<K, Lease[] | undefined>();
  for (const k of changed) {
    const before = from.get(k) ?? [];
    const put = added.filter((l) => partOf(l) === k);
    const part = insertInOrder(before.filter((l) => !gone.has(l)), put);
    if (!part.length) {
      out.set(k, undefined);
      continue;
    }
    out.set(k, part);
    rebuilt?.(before, part, put);
  }
  return out;
}

/** Past this many leases gone or added, a set is grouped afresh. */
const MAX_PATCH = 64;

/**
 * How a folder's list (leaseGroups) was patched from the list before, in lease order both: what
 * is kept per list (the lease tree's split into bucket files, the folder's index by second
 * component) is patched the same way instead of built again from a thousand leases. `gone` may
 * hold leases of other folders too.
 */
export interface ListStep {
  from: Lease[];
  gone: ReadonlySet<Lease>;
  added: readonly Lease[];
}

const listSteps = new WeakMap<readonly Lease[], ListStep>();

/** How `list` (a list of leaseGroups) was patched from the one before, if it was. */
export function listStep(list: readonly Lease[]): ListStep | undefined {
  return listSteps.get(list);
}

/** The leases taken for `task`, in the set's order. */
export function leasesOfTask(leases: readonly Lease[], task: string): readonly Lease[] {
  return groupsOf(leases).byTask.get(task) ?? [];
}

/** `agent`'s leases, in the set's order. */
export function leasesOfAgent(leases: readonly Lease[], agent: string): readonly Lease[] {
  return groupsOf(leases).byAgent.get(agent) ?? [];
}

/**
 * No lease of `leases` expires before this: while it is in the future none has expired (a claim
 * sweeps each set it derives, and a set patched from the last one costs no walk for it).
 */
export function earliestExpiry(leases: readonly Lease[]): number {
  return groupsOf(leases).earliest;
}

/** The leases of `leases` grouped by key, each group in the set's order; the keys in no set order. */
export function leaseGroups(leases: readonly Lease[]): ReadonlyMap<string, readonly Lease[]> {
  return groupsOf(leases).byKey;
}

/**
 * The leases that may name a file `pattern` names: all of them, or, for a pattern starting in a
 * plain folder, that folder's and those near every pattern. In the set's order, so answers built
 * from them come out as a walk of the whole set would give them.
 */
export function leasesNear(leases: readonly Lease[], pattern: string): readonly Lease[] {
  const key = groupKey(pattern);
  if (!plainKey(key)) return leases;
  const g = groupsOf(leases);
  const lists = [narrowed(g.byKey.get(key) ?? [], secondOf(pattern)), ...g.odd.map((k) => g.byKey.get(k)!)].filter((l) => l.length);
  if (lists.length <= 1) return lists[0] ?? [];
  if (isInLeaseOrder(leases)) return lists.reduce((a, b) => merged(a, b));
  const wanted = new Set(lists.flat());
  return leases.filter((l) => wanted.has(l));
}

/**
 * A pattern's second path component when it is a plain name (`area5` in `src/area5/**`, `f.ts` in
 * `src/f.ts`), else null: nothing there, a glob, an escape, an extglob's parenthesis, or a dot
 * segment anywhere in the pattern, any of which may name what another second component names.
 * Two patterns of one folder whose second components are different plain names name no common
 * file, as two whose first folders differ (groupKey): a folder holding every lease of the
 * repository (src/) is narrowed a level further.
 */
function secondOf(pattern: string): string | null {
  const slash = pattern.indexOf("/");
  if (slash <= 0) return null;
  const end = pattern.indexOf("/", slash + 1);
  const part = end < 0 ? pattern.slice(slash + 1) : pattern.slice(slash + 1, end);
  if (!part || isGlob(part) || part.includes("\\") || part.includes("(") || DOT_SEGMENT.test(pattern)) return null;
  return part;
}

const DOT_SEGMENT = /(^|\/)\.\.?(\/|$)/;

/** secondOf of a lease's pattern, by lease object (never mutated). */
const seconds = new WeakMap<Lease, string | null>();
function leaseSecond(l: Lease): string | null {
  let v = seconds.get(l);
  if (v === undefined) seconds.set(l, (v = secondOf(l.pattern)));
  return v;
}

/**
 * The leases of one folder's list that may meet a pattern whose second component is `second`:
 * those with the same one or none that can be told apart. Kept by list and component (a claim asks
 * for its scope two or three times); taken from the list's index by second component where the
 * list is in lease order (every claim names a scope of its own: a filter of a thousand leases
 * each time, ~0.5 ms of a claim here).
 */
function narrowed(list: readonly Lease[], second: string | null): readonly Lease[] {
  if (second === null || list.length < NARROW_FROM) return list;
  let byPart = narrowings.get(list);
  if (!byPart) narrowings.set(list, (byPart = new Map()));
  let out = byPart.get(second);
  if (!out) {
    if (orderedLists.has(list)) {
      const index = secondsOf(list);
      const same = index.get(second) ?? [];
      const any = index.get(null) ?? [];
      out = !same.length ? any : !any.length ? same : merged(same, any);
    } else
      out = list.filter((l) => {
        const other = leaseSecond(l);
        return other === null || other === second;
      });
    if (byPart.size >= 64) byPart.clear();
    byPart.set(second, out);
  }
  return out;
}

/**
 * A folder's leases (a list in lease order) by second component, those with none that can be told
 * apart under null: each part in the list's order.
 */
type Seconds = ReadonlyMap<string | null, Lease[]>;

const secondsIndex = new WeakMap<readonly Lease[], Seconds>();

/** Whether a folder's list has its index by second component, and whether that index was patched from the list before's (tests ask). */
export function secondsIndexOf(list: readonly Lease[]): "none" | "fresh" | "patched" {
  const index = secondsIndex.get(list);
  return !index ? "none" : patchedIndexes.has(index) ? "patched" : "fresh";
}

const patchedIndexes = new WeakSet<Seconds>();

/** The index of `list` (in lease order): patched from the list before's where the list was patched from it (listStep). */
function secondsOf(list: readonly Lease[]): Seconds {
  let index = secondsIndex.get(list);
  if (index) return index;
  const step = listSteps.get(list);
  const before = step && secondsIndex.get(step.from);
  if (step && before) {
    // `gone` may hold other folders' leases: their parts are looked at and nothing is removed.
    index = repartitionShared(before, step.gone, step.added, leaseSecond);
    patchedIndexes.add(index);
  } else {
    const fresh = new Map<string | null, Lease[]>();
    for (const l of list) push(fresh, leaseSecond(l), l);
    index = fresh;
  }
  secondsIndex.set(list, index);
  return index;
}

/** Below this many leases a folder's list is taken whole (the filter costs what it saves). */
const NARROW_FROM = 16;
const narrowings = new WeakMap<readonly Lease[], Map<string, readonly Lease[]>>();

/** Two lists in lease order, as one. */
function merged(a: readonly Lease[], b: readonly Lease[]): Lease[] {
  const out: Lease[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && leaseOrder(a[i]!, b[j]!) <= 0)) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}
