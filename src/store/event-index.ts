// An index of the event log under .git/handoff/events/, so a filtered read (`events --agent X
// --limit 20`) or `stats` over 100,000 events does not inflate and parse every commit on every
// call. It is a cache keyed by ref tips (DESIGN: thrown away and rebuilt at will):
//   manifest.json      every indexed ref: its tip, an id and how many events it holds; each
//                      key file's length; first, on a line of its own, its head: what a read
//                      with no ref moved needs (ManifestHead), keyed by the ref files' stamp
//   generation         the last generation of key files taken (takeGeneration)
//   ref-folders        the last stamp taken, with the ref folders' stats it stands for while
//                      they stand (ref-folder-record.ts)
//   all.jsonl          every event, one line each: its time, ref id, position on that ref,
//                      commit, event JSON (event-index-lines.ts)
//   agent-<key>.jsonl  the lines whose agent or by is one agent
//   type-<type>.jsonl  the lines of one event type
//   stats.jsonl        every event `stats` reads the details of, cut to the fields it reads
//   counted.jsonl      the times of the events `stats` only counts (not told apart by commit: a
//                      count, not a list), read only for a window (--since); how many each ref
//                      holds is in the manifest, which is all `stats` without one reads of them
//   partners.jsonl     `leased` events cut the same way, read only when an expiry needs them
// A ref whose tip moved forward is walked from its new tip back to the indexed one and the new
// lines appended; a ref rewritten or deleted gets a new id (or none) and its old lines are dead,
// dropped by the next compaction, which writes the key files anew under the next generation's
// names (the manifest's `gen`), as a build from scratch does: a reader still going by the manifest
// before finds its own files, or none, and reads again. The manifest also holds each key file's length: a file is read
// only up to it, so an update in flight or a crash between an append and the manifest never shows
// half an update (the next update cuts such lines off before it appends), and a file shorter than
// the manifest says (removed, emptied, cut, a link in its place) is damage: the index is dropped
// and built again, where it used to answer "no events" for as long as the manifest stood.
import { FNV_BASIS, fnv1a32Pair, hex32 } from "../core/fnv.ts";
import { join } from "node:path";
import { HandoffError } from "../core/errors.ts";
import type { HandoffEvent } from "../core/event.ts";
import { isCountedList, isTakeoverPartner, statsProjection, type CountedTimes } from "../core/stats.ts";
import { eventFromMessage, parseCommit, readTyped } from "./codec.ts";
import { REF_ROOT, type Store } from "./store.ts";
import { ownFolder } from "../git/safe-file.ts";
import { tryOwnedLock } from "../git/owned-lock.ts";
import { decodeLine, eventLine, eventLineId, readAllLines, readNewestLines, type KeyLines, type LineRef, type RefsOf } from "./event-index-lines.ts";
import { recordedText, recordText } from "./ref-folder-record.ts";
import { appendAt, compact, Damaged, dropManifest, fileOf, freshManifest, readHead, readKeyFile, readManifest, removeKeyFiles, sizeOf, takeGeneration, writeManifest, type Manifest, type ManifestHead, type RefEntry } from "./event-index-files.ts";

/**
 * A lock without a holder recorded (an older build's, held for its whole update, a rebuild of
 * 100,000 events included) is broken after this long.
 */
const ANONYMOUS_LOCK_STALE_MS = 60_000;

/** One indexed event, with where it sits: its ref's order among refs, then its position on it. */
export interface IndexedEvent {
  event: HandoffEvent;
  oid: string;
  ref: number;
  seq: number;
}

export interface IndexReport {
  /** Refs whose history was walked (in part or whole) to bring the index up to date. */
  walked: number;
  /** Events added to the index by this call. */
  added: number;
  rebuilt: boolean;
}

export function indexDir(store: Store): string {
  return join(store.repo.commonDir, "handoff", "events");
}

/**
 * The name of an agent's key file: 64 bits of FNV-1a (two 32-bit hashes from two offset bases). Two
 * agents with one key share a file, and every line read is still matched against the filter, so a
 * clash costs only reading the other's lines. (It was SHA-1 in JavaScript: ~0.2 ms of a cold
 * `events --agent X`, its code run once, in the interpreter; node:crypto costs 5 ms to load.)
 */
export function agentKey(agent: string): string {
  const [a, b] = fnv1a32Pair(agent, FNV_BASIS, AGENT_KEY_BASIS);
  return hex32(a) + hex32(b);
}

/** The second hash's offset basis: any other than FNV's own. */
const AGENT_KEY_BASIS = 0x5bd1e995;

/** The event key files; the others (stats, counted, partners) are lines `stats` reads, each ref id first. */
const isEventKey = (key: string) => key === "all" || key.startsWith("type-") || key.startsWith("agent-");

/** The ref id of a line of the key file `key`: what compaction keeps lines by. */
const lineId = (key: string, line: string) => (isEventKey(key) ? eventLineId(line) : Number(line.slice(0, line.indexOf("\t"))));

const keysOf = (e: HandoffEvent): string[] => {
  const keys = ["all", `type-${e.type}`, `agent-${agentKey(e.agent)}`];
  if (e.by && e.by !== e.agent) keys.push(`agent-${agentKey(e.by)}`);
  return keys;
};

/**
 * Holds the update lock for `fn`; null when another process holds it (the caller reads directly).
 * The lock records its holder (owned-lock.ts): one left by a process that is gone is broken at
 * once, and only that one, where two readers that both found a 60 s old lock used to remove it in
 * turn, the second removing the lock the first had just taken, and both append to the key files.
 */
function withLock<T>(dir: string, fn: () => Promise<T>): Promise<T | null> | null {
  let release: (() => void) | null;
  try {
    // A folder of our own: a link in its place is removed, never followed (git/safe-file.ts), so
    // nothing is made, written or removed in a folder it names.
    ownFolder(dir);
    release = tryOwnedLock(join(dir, "lock"), ANONYMOUS_LOCK_STALE_MS);
  } catch {
    return null; // a read-only repository: read the history directly
  }
  if (!release) return null;
  // An index that cannot be written (disk full, permissions) only means a direct read.
  return fn()
    .catch((e: unknown) => {
      if (e instanceof HandoffError) throw e;
      return null;
    })
    .finally(release);
}

/**
 * Walks `tip` back along first parents until `stop`: the events newest first, whether `stop` was
 * met, and the commit without parents it ended at (`root`) when it walked the whole way.
 */
async function walk(store: Store, name: string, tip: string, stop: string | null): Promise<{ lines: { oid: string; event: HandoffEvent }[]; reached: boolean; root?: string; problem?: string }> {
  const lines: { oid: string; event: HandoffEvent }[] = [];
  let oid: string | undefined = tip;
  let last: string | undefined;
  while (oid) {
    if (oid === stop) return { lines, reached: true };
    let data: Buffer;
    try {
      data = await readTyped(store.reader, oid, "commit", name);
    } catch (e) {
      if (!(e instanceof HandoffError)) throw e;
      return { lines, reached: false, problem: e.message };
    }
    const commit = parseCommit(data);
    const event = eventFromMessage(commit.message);
    if (event) lines.push({ oid, event });
    last = oid;
    oid = commit.parents[0];
  }
  return { lines, reached: stop === null, ...(last !== undefined ? { root: last } : {}) };
}

/**
 * Brings the index up to the given tips and returns it, or null when another process is updating
 * it (the caller then reads the history directly). A damaged index is rebuilt from scratch.
 * `stamp`: RefFiles' stamp of the listing `tips` came from (null: none), written in the manifest's
 * head for the next reads (readHead); an index up to the tips under another stamp (refs packed,
 * a ref moved and back) is written again for it.
 */
export async function refreshIndex(store: Store, tips: { name: string; oid: string }[], stamp: string | null = null): Promise<{ manifest: Manifest; report: IndexReport } | null> {
  const dir = indexDir(store);
  const current = readManifest(dir);
  if (current && upToDate(current, tips) && (stamp === null || readHead(dir, stamp))) return { manifest: current, report: { walked: 0, added: 0, rebuilt: false } };
  const updated = await withLock(dir, async () => {
    const m = readManifest(dir);
    try {
      return await update(store, dir, m, tips, stamp);
    } catch (e) {
      // A key file the manifest says more of than it holds: everything again, from scratch.
      if (!(e instanceof Damaged) || !m) throw e;
      return update(store, dir, null, tips, stamp);
    }
  });
  // Up to date but under another stamp, and another process updating: read as it is.
  return updated ?? (current && upToDate(current, tips) ? { manifest: current, report: { walked: 0, added: 0, rebuilt: false } } : null);
}

/** The index `was` brought up to `tips` (a fresh one without it), written, and its manifest. */
async function update(store: Store, dir: string, was: Manifest | null, tips: { name: string; oid: string }[], stamp: string | null): Promise<{ manifest: Manifest; report: IndexReport }> {
  let m = was;
  const rebuilt = !m;
  if (!m) {
    // Under a generation of its own, beside the files of the index it replaces (removed once the
    // manifest names the new ones), as a compaction writes.
    m = freshManifest();
    m.gen = takeGeneration(dir);
  }
  const report: IndexReport = { walked: 0, added: 0, rebuilt };
  const appends = new Map<string, string[]>();
  const live = new Set(tips.map((t) => t.name));
  for (const [name, entry] of Object.entries(m.refs)) {
    if (!live.has(name)) {
      m.dead += entry.n;
      delete m.refs[name];
    }
  }
  for (const t of tips) {
    const old = m.refs[t.name];
    if (old && old.tip === t.oid) continue;
    report.walked++;
    const w = await walk(store, t.name, t.oid, old && !old.problem ? old.tip : null);
    let entry: RefEntry;
    if (old && w.reached && !old.problem) entry = { ...old, tip: t.oid };
    else {
      if (old) m.dead += old.n;
      entry = { id: m.next++, tip: t.oid, n: 0 };
    }
    if (w.problem) entry.problem = w.problem;
    else delete entry.problem;
    if (w.root !== undefined) entry.root = w.root.slice(0, ROOT_DIGITS);
    else if (!(old && w.reached)) delete entry.root;
    const add = (k: string, line: string) => (appends.get(k) ?? appends.set(k, []).get(k)!).push(line);
    const counted: string[] = [];
    for (const { oid, event } of w.lines.reverse()) {
      const seq = entry.n++;
      const line = eventLine(entry.id, seq, oid, event);
      for (const k of keysOf(event)) add(k, line);
      const cut = statsLine(event);
      if (cut === null) counted.push(Date.parse(event.at).toString(36));
      else add("stats", `${entry.id}\t${seq}\t${oid.slice(0, 16)}\t${cut}\n`);
      if (isTakeoverPartner(event)) add("partners", `${entry.id}\t${seq}\t${oid.slice(0, 16)}\t${event.at}\t${event.type}\t${clean(event.task)}\t${clean(event.agent)}\n`);
      report.added++;
    }
    // The events only counted by `stats`: their times in one line (base 36 ms) per ref and update,
    // and how many in the ref's entry (committed with its `n`, by the manifest written below).
    if (counted.length) {
      add("counted", `${entry.id}\t${entry.n - 1}\t-\t${counted.join(",")}\n`);
      entry.counted = (entry.counted ?? 0) + counted.length;
    }
    m.refs[t.name] = entry;
  }
  for (const [k, lines] of appends) m.sizes[k] = appendAt(fileOf(dir, k, m.gen), lines.join(""), m.sizes[k] ?? 0);
  m.total += report.added;
  if (sharesHistory(m)) m.shared = true;
  else delete m.shared;
  const compacting = m.dead > 1000 && m.dead * 4 > m.total;
  if (compacting) compact(dir, m, lineId);
  writeManifest(dir, m, stamp === null ? null : headOf(m, tips, stamp));
  // A reader still going by the manifest before this one finds its files gone: it reads again.
  if (compacting || rebuilt) removeKeyFiles(dir, m.gen);
  return { manifest: m, report };
}

/** The manifest's head (ManifestHead) for `tips`, every one of which `m` holds. */
function headOf(m: Manifest, tips: { name: string; oid: string }[], stamp: string): ManifestHead {
  const numbers: number[] = [];
  const problems: [string, string][] = [];
  let counted = 0;
  for (const t of tips) {
    const r = m.refs[t.name]!;
    numbers.push(r.id, r.n);
    if (r.problem) problems.push([t.name, r.problem]);
    counted += r.counted ?? 0;
  }
  let width = 1;
  for (const n of numbers) width = Math.max(width, String(n).length);
  const places = numbers.map((n) => `${String(n).padStart(width)},`).join("");
  return { version: m.version, gen: m.gen, sizes: Object.entries(m.sizes).flat(), stamp, places, width, problems, shared: !!m.shared, counted };
}

/**
 * How much of a root's id an entry keeps: every reader parses the manifest (1,100 entries at 1,000
 * tasks), and two roots alike in 64 bits but different only make `stats` walk the history, never
 * count wrong.
 */
const ROOT_DIGITS = 16;

/**
 * Whether two indexed refs share commits (a ref copied from another, a task both live and archived):
 * first-parent histories that meet go on together to the same root. Their shared events are on
 * both refs' lines; the history walk reads each commit once.
 */
function sharesHistory(m: Manifest): boolean {
  const roots = new Set<string>();
  for (const name in m.refs) {
    const root = m.refs[name]!.root;
    if (root === undefined) continue;
    if (roots.has(root)) return true;
    roots.add(root);
  }
  return false;
}

/**
 * An event as `stats` needs it, cheap to read back: its time alone when only its time counts, else
 * time, type, task and agent as tab-separated fields, then the other fields it reads as JSON.
 */
function statsLine(event: HandoffEvent): string | null {
  const cut = statsProjection(event) as Record<string, unknown> | null;
  if (!cut) return null;
  const { at, type, task, agent, ...rest } = cut;
  return `${at}\t${type}\t${clean(task)}\t${clean(agent)}${Object.keys(rest).length ? `\t${JSON.stringify(rest)}` : ""}`;
}

const clean = (v: unknown) => String(v).replace(/[\t\n]/g, " ");

function upToDate(m: Manifest, tips: { name: string; oid: string }[]): boolean {
  if (Object.keys(m.refs).length !== tips.length) return false;
  return tips.every((t) => m.refs[t.name]?.tip === t.oid);
}

/**
 * The committed lines of one key file ("all", `type-<type>`, `agent-<key>`), in no particular
 * order. Null when a line is damaged: the caller drops the index and reads directly.
 */
export function readIndexed(store: Store, m: Manifest, key: string, order: RefOrder): IndexedEvent[] | null {
  const read = eventLines(store, m.gen, m.sizes[key] ?? 0, key, refsOfManifest(m, order), null);
  if (!read) return null;
  const out: IndexedEvent[] = [];
  for (const l of read.lines) {
    const event = decodeLine(l);
    if (!event) return null;
    out.push({ event, oid: l.oid, ref: l.ref, seq: l.seq });
  }
  return out;
}

/**
 * The index's head when the refs are as the stamp of its last update says (RefFiles' stamp of
 * refs/handoff/ now, listed or not), else null (refs not read from files here, or moved): the
 * caller lists the refs and reads the manifest.
 */
export function readIndexHead(store: Store): ManifestHead | null {
  const refDir = store.refFilesDir();
  if (refDir === null) return null;
  const dir = indexDir(store);
  // The stamp as recorded where the ref folders have not changed since (ref-folder-record.ts), else read.
  const record = join(dir, "ref-folders");
  const stamp = recordedText(record, refDir) ?? recordText(record, refDir, REF_ROOT.replace(/\/$/, ""), () => store.refStamp([REF_ROOT])!);
  // A line a loose ref, then packed-refs' (RefFiles' stampText): the count a one-shot view packs by
  // once it answered (a long-running process's refs move on after this read).
  if (!store.warm) {
    let lines = 0;
    for (let at = stamp.indexOf("\n"); at >= 0; at = stamp.indexOf("\n", at + 1)) lines++;
    store.looseHandoffCounted = lines;
  }
  return readHead(dir, stamp);
}

/** The refs of a manifest or of its head, for a read in no order of refs (stats). */
const refsOfEither = (m: Manifest | ManifestHead): RefsOf => ("refs" in m ? refsOfManifest(m, null) : refsOfHead(m));

/**
 * Each ref's place is its place in the head's listing. A few ids (the refs of the lines `events
 * --limit` keeps) are found in the places' text, each where its number stands as an id; more (every
 * ref `stats` reads) from the text decoded whole.
 */
function refsOfHead(head: ManifestHead): RefsOf {
  return (ids) => {
    const out = new Map<number, { place: number; n: number }>();
    const { places: p, width } = head;
    const stride = width + 1;
    if (ids.size > FEW_IDS) {
      let numbers = decodedPlaces.get(head);
      if (!numbers) decodedPlaces.set(head, (numbers = JSON.parse(`[${p.slice(0, -1)}]`) as number[]));
      for (let i = 0; i + 1 < numbers.length; i += 2) if (ids.has(numbers[i]!)) out.set(numbers[i]!, { place: i / 2, n: numbers[i + 1]! });
      return out;
    }
    for (const id of ids) {
      // A match ends at a comma, so it is one whole number of the text; an id's stand at even places.
      const token = `${String(id).padStart(width)},`;
      if (token.length !== stride) continue; // wider than every number listed: not a listed ref's
      for (let at = p.indexOf(token); at >= 0; at = p.indexOf(token, at + 1)) {
        if (at % (2 * stride) !== 0) continue;
        out.set(id, { place: at / (2 * stride), n: Number(p.slice(at + stride, at + 2 * stride - 1)) });
        break;
      }
    }
    return out;
  };
}

/** The places of a head decoded whole, once (stats reads three key files through one head). */
const decodedPlaces = new WeakMap<ManifestHead, number[]>();

/** Up to this many ids, refsOfHead looks each one up in the places' text. */
const FEW_IDS = 32;

/**
 * `stats.jsonl`: the events `stats` reads (cut by statsProjection), each commit once, and the
 * times of the others: for a window (`windowed`, --since) their lists from `counted.jsonl`, else
 * only how many, from the manifest. Null when damaged, as readIndexed.
 */
export function readStatsIndexed(store: Store, m: Manifest | ManifestHead, windowed: boolean): { events: HandoffEvent[]; counted: CountedTimes } | null {
  let counted: CountedTimes;
  if (windowed) {
    const lists: string[] = [];
    const read = scan(store, m.gen, sizeOf(m, "counted"), "counted", refsOfEither(m), (payload) => {
      // Checked whole, counted later (core/stats.ts countedSince): no number made per time.
      if (!isCountedList(payload)) throw new Error("damaged");
      lists.push(payload);
      return null;
    });
    if (!read) return null;
    counted = lists;
  } else if ("refs" in m) {
    let total = 0;
    for (const name in m.refs) total += m.refs[name]!.counted ?? 0;
    counted = { total };
  } else counted = { total: m.counted };
  const seen = new Set<string>();
  const events: HandoffEvent[] = [];
  const lines = scan(store, m.gen, sizeOf(m, "stats"), "stats", refsOfEither(m), (payload, oid) => {
    if (seen.has(oid)) return null;
    seen.add(oid);
    return statsEvent(payload);
  });
  if (!lines) return null;
  for (const l of lines) events.push(l.event);
  return { events, counted };
}

/** `leased` events for take-over matching (partners.jsonl), each commit once. */
export function readPartnersIndexed(store: Store, m: Manifest | ManifestHead): HandoffEvent[] | null {
  const seen = new Set<string>();
  const lines = scan(store, m.gen, sizeOf(m, "partners"), "partners", refsOfEither(m), (payload, oid) => {
    if (seen.has(oid)) return null;
    seen.add(oid);
    return statsEvent(payload);
  });
  return lines ? lines.map((l) => l.event) : null;
}

/** A stats line's payload: time, type, task, agent, then (optionally) the other fields as JSON. */
function statsEvent(payload: string): HandoffEvent {
  const a = payload.indexOf("\t");
  const b = payload.indexOf("\t", a + 1);
  const c = payload.indexOf("\t", b + 1);
  if (a < 0 || b < 0 || c < 0) throw new Error("damaged");
  const d = payload.indexOf("\t", c + 1);
  const e = { at: payload.slice(0, a), type: payload.slice(a + 1, b), task: payload.slice(b + 1, c), agent: payload.slice(c + 1, d < 0 ? undefined : d) } as HandoffEvent;
  return d < 0 ? e : Object.assign(e, JSON.parse(payload.slice(d + 1)) as object);
}

/** Each ref's place among the refs read, for the refs a key file names (empty: all in one place). */
export type RefOrder = (names: ReadonlySet<string>) => ReadonlyMap<string, number>;

function refsOfManifest(m: Manifest, order: RefOrder | null): RefsOf {
  return (ids) => {
    const named = new Map<number, { name: string; n: number }>();
    for (const name in m.refs) {
      const r = m.refs[name]!;
      if (ids.has(r.id)) named.set(r.id, { name, n: r.n });
    }
    const places = order ? order(new Set([...named.values()].map((r) => r.name))) : null;
    const out = new Map<number, { place: number; n: number }>();
    for (const [id, r] of named) out.set(id, { place: places?.get(r.name) ?? 0, n: r.n });
    return out;
  };
}

/**
 * The committed lines of one of the files `stats` reads (stats, counted, partners: ref id,
 * position, commit, then the payload `decode` reads), of live refs, decoded. Null when a line is damaged.
 */
function scan(store: Store, gen: number, size: number, key: string, refsOf: RefsOf, decode: (payload: string, oid: string) => HandoffEvent | null): IndexedEvent[] | null {
  const text = readKeyFile(fileOf(indexDir(store), key, gen), size);
  if (text === null) return null;
  // The refs the lines name first: a key file names a few, the manifest every ref (10,000 task
  // refs and more), and a map of all of them cost ~20 ms of a cold `events --agent X`.
  const ids = new Set<number>();
  for (let at = 0; at < text.length; ) {
    const tab = text.indexOf("\t", at);
    let end = text.indexOf("\n", at);
    if (end < 0) end = text.length;
    if (tab > at && tab < end) ids.add(Number(text.slice(at, tab)));
    at = end + 1;
  }
  const named = refsOf(ids);
  const out: IndexedEvent[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    const t1 = text.indexOf("\t", start);
    const t2 = t1 < 0 ? -1 : text.indexOf("\t", t1 + 1);
    const t3 = t2 < 0 ? -1 : text.indexOf("\t", t2 + 1);
    if (t1 < 0 || t3 < 0 || t3 >= end) return null;
    const line = start;
    start = end + 1;
    const ref = named.get(Number(text.slice(line, t1)));
    const seq = Number(text.slice(t1 + 1, t2));
    if (!ref || !(seq < ref.n)) continue;
    const oid = text.slice(t2 + 1, t3);
    try {
      const event = decode(text.slice(t3 + 1, end), oid);
      if (event) out.push({ event, oid, ref: ref.place, seq });
    } catch {
      return null;
    }
  }
  return out;
}

/**
 * An event key file's committed lines ("all", `type-<type>`, `agent-<key>`), each ref's place its
 * RefOrder's, their events left to decodeLine: every line, or (`keep`) the lines of the newest
 * times, at least `keep` of them (event-index-lines.ts readNewestLines). Null when damaged.
 */
export function readIndexedLines(store: Store, m: Manifest, key: string, order: RefOrder, keep: number | null): KeyLines | null {
  return eventLines(store, m.gen, m.sizes[key] ?? 0, key, refsOfManifest(m, order), keep);
}

/** readIndexedLines through the head: each ref's place is its place in the head's listing. */
export function readIndexedLinesByHead(store: Store, head: ManifestHead, key: string, keep: number | null): KeyLines | null {
  return eventLines(store, head.gen, sizeOf(head, key), key, refsOfHead(head), keep);
}

function eventLines(store: Store, gen: number, size: number, key: string, refsOf: RefsOf, keep: number | null): KeyLines | null {
  const text = readKeyFile(fileOf(indexDir(store), key, gen), size);
  if (text === null) return null;
  return keep === null ? readAllLines(text, refsOf) : readNewestLines(text, refsOf, keep);
}

export { decodeLine, type KeyLines, type LineRef };

/** Throws the index away (see dropManifest): the next read rebuilds it. */
export function dropIndex(store: Store, seen?: Manifest | ManifestHead): void {
  dropManifest(indexDir(store), seen);
}

export type { Manifest as EventIndexManifest };
