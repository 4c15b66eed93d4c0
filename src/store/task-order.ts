// Every task in the orders a bounded listing takes them in, for one-shot commands, from the task
// order file (task-order-file.ts) of the current task refs: a `task list --limit 100` at 10,000
// tasks parses the records it returns, not 10,000 (goal: a listing costs what it returns plus the
// refs that moved). When refs moved since the file was written it is patched: the refs whose
// value differs between the key it was written under and the current one are read again (a claim
// moved one), found in the file by a binary search of its places by id, and put in the orders by
// binary searches too; the other records are neither parsed nor copied by the process. Only
// without a file, or past thousands of moved refs, is every record read (the listing,
// task-store.ts), once.
import { HandoffError } from "../core/errors.ts";
import { bestFirst } from "../core/dependency-graph.ts";
import type { Task } from "../core/task.ts";
import { upperBound } from "../core/upper-bound.ts";
import { fromBytes, mergeSorted, packedLines } from "../git/ref-files.ts";
import type { RefTip } from "../git/refs.ts";
import { LISTING_AT, viewKey, type FileKey } from "./record-cache-listing.ts";
import type { ListingRecord, Store } from "./store.ts";
import { byAge, readTaskAt, storedListingOf, TASKS_PREFIX } from "./task-store.ts";
import { expiryOf, flagsOf, OrderFile, orderFile, patchOrderFile, placeById, recordLine, statusCode, writeOrderFile, type OrderHead } from "./task-order-file.ts";

/** Every task by its place oldest first: what the orders and counts need, and the record on demand. */
export interface OrderedTasks {
  readonly count: number;
  readonly head: OrderHead;
  /** The record at place `i` (parsed now when it comes from the file: throws a SyntaxError on a damaged line). */
  record(i: number): Task;
  /** The place of task `id`, or undefined. */
  placeOf(id: string): number | undefined;
  /** Done with it (a file read in part keeps its descriptor until then). */
  close?(): void;
}

/** More refs moved than this since the file was written: read every record instead. */
const PATCH_AT_MOST = 2_000;

type Parts = NonNullable<ReturnType<Store["listRefParts"]>>;

/**
 * The ordered tasks of the current task refs for a one-shot command, or null (a long-running
 * process, refs not in files, fewer than LISTING_AT tasks, or a listing with problems: the caller
 * lists as before and reports them). Close it when done.
 */
export async function orderedTasks(store: Store, opts: ListingRecord = {}): Promise<OrderedTasks | null> {
  if (store.warm) return null;
  const parts = store.listRefParts(TASKS_PREFIX, opts);
  const key = parts ? viewKey(parts) : null;
  if (!parts || !key) return null;
  const path = orderFile(store.repo.commonDir);
  const kept = OrderFile.read(path, key);
  if (kept) return kept;
  const old = OrderFile.readTail(path);
  if (old) {
    let done: OrderedTasks | null = null;
    try {
      done = await patched(store, old, parts, path, key);
    } finally {
      if (!done) old.close(); // else closed with what it serves
    }
    if (done) return done;
  }
  const tips = mergeSorted(parts.packed(), parts.loose);
  if (tips.length < LISTING_AT) return null;
  const made = await fresh(store, tips);
  if (made) writeOrderFile(path, key, made.head, made.tasks.map(recordLine));
  return made;
}

/**
 * `read` over the ordered tasks, closed after; null when there are none (orderedTasks) or a line
 * read was damaged (the caller then lists every record, as without the file).
 */
export async function fromOrderFile<T>(store: Store, read: (o: OrderedTasks) => T): Promise<T | null> {
  const ordered = await orderedTasks(store);
  if (!ordered) return null;
  try {
    return read(ordered);
  } catch (e) {
    if (e instanceof SyntaxError) return null;
    throw e;
  } finally {
    ordered.close?.();
  }
}

/** Every record read (the listing), in its order. */
async function fresh(store: Store, tips: RefTip[]): Promise<(OrderedTasks & { tasks: readonly Task[] }) | null> {
  const listing = await storedListingOf(store, tips);
  if (listing.problems.length || listing.tasks.length !== tips.length) return null;
  const tasks = listing.tasks;
  const at = (i: number) => tasks[i]!;
  const places = () => tasks.map((_, i) => i);
  const head: OrderHead = {
    codes: tasks.map((t) => statusCode(t.status)).join(""),
    expires: tasks.map(expiryOf),
    best: places().sort(bestPlaces(at)),
    newest: places().sort(newestFirst(at)),
    byId: places().sort(byId(at)),
    flags: tasks.map(flagsOf),
  };
  return { count: tasks.length, head, tasks, record: at, placeOf: (id) => placeById(head.byId, (i) => tasks[i]!.id, id) };
}

/** How many refs `parts` holds (packed lines, less peeled ones, and loose files not packed): no name decoded. */
function refCount(parts: Parts): number {
  const run = parts.packedRun() ?? "";
  let n = 0;
  for (let at = 0; at < run.length; ) {
    if (run.charCodeAt(at) !== 0x5e) n++; // "^": the peeled value of the line before
    const nl = run.indexOf("\n", at);
    at = nl < 0 ? run.length : nl + 1;
  }
  for (const name of parts.loose.keys()) if (parts.readPacked(name) === null) n++;
  return n;
}

/** The refs whose value moved from the key `old` was written under to `parts`: name -> new value (null: gone). */
function movedRefs(old: OrderFile, parts: Parts): Map<string, string | null> | null {
  const was = old.writtenKey();
  if (!was) return null;
  const oldLoose = new Map<string, string>();
  for (const line of was.loose.split("\n")) {
    if (!line) continue;
    const sp = line.lastIndexOf(" ");
    oldLoose.set(fromBytes(line.slice(0, sp)), line.slice(sp + 1));
  }
  const moved = new Map<string, string | null>();
  if (was.packedRun === parts.packedRun()) {
    // The same packed refs (no pack since): only loose files can differ.
    for (const name of new Set([...oldLoose.keys(), ...parts.loose.keys()])) {
      const before = oldLoose.get(name) ?? parts.readPacked(name);
      const now = parts.loose.get(name) ?? parts.readPacked(name);
      if (before !== now) moved.set(name, now);
    }
    return moved;
  }
  // Packed since: both sides in full (names and values only; no record is read for a ref that did not move).
  const before = new Map<string, string>();
  for (const { name, oid } of packedLines(was.packedRun, TASKS_PREFIX)) before.set(name, oid);
  for (const [name, oid] of oldLoose) before.set(name, oid);
  const now = new Map(mergeSorted(parts.packed(), parts.loose).map((t) => [t.name, t.oid]));
  for (const [name, oid] of now) if (before.get(name) !== oid) moved.set(name, oid);
  for (const name of before.keys()) if (!now.has(name)) moved.set(name, null);
  return moved;
}

/**
 * The file's tasks with the moved refs read again, and the file patched (patchOrderFile), or
 * written afresh from its lines when the lines replaced outweigh the rest; null when it cannot be
 * patched (the caller reads every record). What it serves reads `old`: close it after.
 */
async function patched(store: Store, old: OrderFile, parts: Parts, path: string, key: FileKey): Promise<OrderedTasks | null> {
  const moved = movedRefs(old, parts);
  if (!moved || moved.size > PATCH_AT_MOST) return null;
  const n = old.count;
  // The old records a patch compares (a few dozen binary search steps), each parsed once.
  const parsed = new Map<number, Task>();
  const was = (i: number) => parsed.get(i) ?? parsed.set(i, old.record(i)).get(i)!;
  const placeOf = (id: string) => placeById(old.head.byId, (i) => was(i).id, id);
  const gone = new Set<number>();
  const replaced = new Map<number, Task>();
  const added: Task[] = [];
  store.expectTaskRecords(moved.size);
  for (const [name, oid] of moved) {
    if (!name.startsWith(TASKS_PREFIX)) return null;
    const at = placeOf(name.slice(TASKS_PREFIX.length));
    if (oid === null) {
      if (at !== undefined) gone.add(at);
      continue;
    }
    let task: Task;
    try {
      task = await readTaskAt(store, name, oid);
    } catch (e) {
      if (e instanceof HandoffError) return null; // the listing reports it
      throw e;
    }
    // Age and id never change for a task: in place. Otherwise (a new task) it goes where its age puts it.
    if (at !== undefined && was(at).created_at === task.created_at) replaced.set(at, task);
    else {
      if (at !== undefined) gone.add(at);
      added.push(task);
    }
  }
  // The new places: `from[k]` is the old place of the task at place k, or -1 - j for added[j],
  // put where its age puts it among the others.
  const from: number[] = [];
  for (let i = 0; i < n; i++) if (!gone.has(i)) from.push(i);
  const readNow = (k: number) => (from[k]! < 0 ? added[-1 - from[k]!]! : replaced.get(from[k]!));
  const taskOf = (k: number) => readNow(k) ?? was(from[k]!);
  added.forEach((t, j) => from.splice(upperBound(from, -1 - j, (x, y) => byAge(x < 0 ? added[-1 - x]! : (replaced.get(x) ?? was(x)), y < 0 ? added[-1 - y]! : (replaced.get(y) ?? was(y)))), 0, -1 - j));
  const count = from.length;
  if (count !== refCount(parts)) return null;
  let codes = "";
  const expires = new Float64Array(count);
  const flags = new Uint8Array(count);
  for (let k = 0; k < count; k++) {
    const t = readNow(k);
    codes += t ? statusCode(t.status) : old.head.codes[from[k]!]!;
    expires[k] = t ? expiryOf(t) : old.head.expires[from[k]!]!;
    flags[k] = t ? flagsOf(t) : old.head.flags[from[k]!]!;
  }
  const head: OrderHead = { codes, expires, flags, ...patchedOrders(old, from, readNow, taskOf, was) };
  // The moved records' lines appended, the others kept where they are. Garbage: the old lines no task points at.
  const appended: Buffer[] = [];
  const lines = from.map((f, k) => (readNow(k) ? -1 - (appended.push(recordLine(readNow(k)!)) - 1) : f));
  let live = 0;
  for (const f of lines) live += f >= 0 ? old.lineLength(f) : appended[-1 - f]!.length;
  let garbage = old.garbage;
  for (const i of [...gone, ...replaced.keys()]) garbage += old.lineLength(i);
  if (garbage <= live) patchOrderFile(path, old, key, head, lines, appended, garbage);
  else {
    // Compacted: every line in age order in a new file (the old lines copied as they are, none parsed).
    writeOrderFile(path, key, head, lines.map((f) => (f >= 0 ? old.line(f) : appended[-1 - f]!)));
  }
  return { count, head, record: taskOf, placeOf: (id) => placeById(head.byId, (k) => taskOf(k).id, id), close: () => old.close() };
}

/**
 * The orders of the patched tasks from the old file's: the places kept, renumbered (a kept task's
 * relative place never changes), the tasks that moved put in again by binary search, instead of
 * sorting 10,000 places.
 */
function patchedOrders(old: OrderFile, from: readonly number[], readNow: (k: number) => Task | undefined, taskOf: (k: number) => Task, was: (i: number) => Task): Pick<OrderHead, "best" | "newest" | "byId"> {
  const now = new Int32Array(old.count).fill(-1);
  // What moved, by new place: 1 its record was read now, 2 its rank best first may differ, 4 it is new.
  const MOVED = 1;
  const RERANKED = 2;
  const NEW = 4;
  const flags = new Uint8Array(from.length);
  for (let k = 0; k < from.length; k++) {
    const f = from[k]!;
    if (f >= 0) now[f] = k;
    const t = readNow(k);
    if (t) flags[k] = MOVED | (f < 0 ? RERANKED | NEW : was(f).priority !== t.priority ? RERANKED : 0);
  }
  const kept = (places: ArrayLike<number>, leave: number) => {
    const out: number[] = [];
    for (let p = 0; p < places.length; p++) {
      const k = now[places[p]!]!;
      if (k >= 0 && !(flags[k]! & leave)) out.push(k);
    }
    return out;
  };
  const best = kept(old.head.best, RERANKED);
  const newest = kept(old.head.newest, MOVED);
  const ids = kept(old.head.byId, NEW);
  const [bestCmp, newestCmp, idCmp] = [bestPlaces(taskOf), newestFirst(taskOf), byId(taskOf)];
  for (let k = 0; k < from.length; k++) {
    if (!flags[k]) continue;
    if (flags[k]! & RERANKED) best.splice(upperBound(best, k, bestCmp), 0, k);
    newest.splice(upperBound(newest, k, newestCmp), 0, k);
    if (flags[k]! & NEW) ids.splice(upperBound(ids, k, idCmp), 0, k);
  }
  return { best, newest, byId: ids };
}

/** Places best first (core/dependency-graph.ts bestFirst). */
function bestPlaces(t: (i: number) => Task): (i: number, j: number) => number {
  return (i, j) => bestFirst(t(i), t(j));
}

/** Places newest first: the latest change first, ties in age order (as a stable sort of the listing). */
function newestFirst(t: (i: number) => Task): (i: number, j: number) => number {
  return (i, j) => {
    const a = t(i).updated_at;
    const b = t(j).updated_at;
    return a < b ? 1 : a > b ? -1 : i - j;
  };
}

/** Places by id, in code unit order (the patch's binary search). */
function byId(t: (i: number) => Task): (i: number, j: number) => number {
  return (i, j) => {
    const a = t(i).id;
    const b = t(j).id;
    return a < b ? -1 : a > b ? 1 : 0;
  };
}
