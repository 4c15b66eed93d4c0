// The files of the event index (event-index.ts) under .git/handoff/events/: the manifest, and key
// files read no further than the lengths it keeps (a file shorter is Damaged), each written and
// read never through a symbolic link (git/safe-file.ts).
import { closeSync, constants, fstatSync, ftruncateSync, readdirSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { readAt } from "../git/read-at.ts";
import { openNoFollow, openWriteNoFollow, readStartNoFollow, readTextNoFollow, replaceFile } from "../git/safe-file.ts";

// 12: the event key files' lines start with the event's time (event-index-lines.ts); 13: agent
// key files named by FNV-1a (event-index.ts agentKey); 14: the head's places as one text; 15: its
// sizes as a list. Bumped with any change of the event's schema too: its lines are taken
// unchecked (test/cache-formats.test.ts).
export const EVENT_INDEX_VERSION = 15;

export interface RefEntry {
  id: number;
  tip: string;
  /** Events indexed for this ref (lines with a higher position are not yet committed). */
  n: number;
  /** Of them, the events `stats` only counts (their times are in counted.jsonl); absent: none. */
  counted?: number;
  /** A damaged history: the message reported on every read, as a direct walk would. */
  problem?: string;
  /** The commit without parents its history ends at, its first 16 hex digits (absent where the walk stopped at a problem). */
  root?: string;
}

export interface Manifest {
  version: number;
  /**
   * The key files' generation, part of their names: a compaction writes the next one beside the
   * files it compacts, never over them, so a reader that goes by an older manifest finds its own
   * files or none (a file rewritten under its name read as the older manifest's: another ref's lines
   * under its ids, a rewritten ref's history missing, and no shorter file to tell).
   */
  gen: number;
  next: number;
  /** Lines whose ref id is no longer live: compaction drops them. */
  dead: number;
  total: number;
  refs: Record<string, RefEntry>;
  /**
   * Two refs share commits (see RefEntry.root): their lines count those commits twice. The lines
   * a reader reads are told apart by commit, the times `stats` only counts are not: `stats` then
   * reads the history itself.
   */
  shared?: boolean;
  /** Each key file's length in bytes ("all", `type-<type>`...): what a reader reads of it, at least what it must hold. */
  sizes: Record<string, number>;
}

/**
 * What `events` needs of the manifest when no ref moved, written first in its text, on a line of
 * its own (readHead): parsing an entry per ref (1,100 at 1,000 tasks, ~2 ms of a cold `events
 * --agent X --limit 20`) and listing every ref (~2 ms more) are then left to the reads that find
 * the refs moved. Derived from the manifest it heads at each write, never kept apart from it.
 */
export interface ManifestHead {
  version: number;
  gen: number;
  /**
   * The manifest's sizes as a list, [key, length, key, length, ...] (sizeOf): an object of 110
   * names was most of what parsing the head took in a cold process (each name a new shape).
   */
  sizes: (string | number)[];
  /**
   * RefFiles' stamp of the listing of refs/handoff/ the index was last brought up to (the loose
   * files' names and values, packed-refs' identity): a reader whose stamp is the same lists the
   * same refs, at the same tips, and this index holds them all.
   */
  stamp: string;
  /**
   * That listing's refs in its order (archived tasks last, as eventTips lists them), each as its id
   * and event count: `id,n,id,n,...,`, each number right-aligned in `width` characters and
   * followed by a comma, so a ref's place is where its id stands (event-index.ts refsOfHead). The
   * text of a JSON array of them without its brackets: parsed as one string with the head (an
   * array of 2,200 numbers was 0.14 ms of the head's 0.17, in a cold process), decoded whole only
   * where every ref is needed (stats).
   */
  places: string;
  width: number;
  /** Those of them with a damaged history, in the same order: name and message. */
  problems: [string, string][];
  /** The manifest's `shared`, and its entries' `counted` summed: what `stats` reads of them. */
  shared: boolean;
  counted: number;
}

/** A key file that does not hold what the manifest says: the index is built again. */
export class Damaged extends Error {}

export const fileOf = (dir: string, key: string, gen: number) => join(dir, gen ? `${key}.${gen}.jsonl` : `${key}.jsonl`);

export const freshManifest = (): Manifest => ({ version: EVENT_INDEX_VERSION, gen: 0, next: 1, dead: 0, total: 0, refs: {}, sizes: {} });

/** The text each manifest (or head) was read from or written as (dropManifest compares it with the file's). */
const texts = new WeakMap<Manifest | ManifestHead, string>();

export function readManifest(dir: string): Manifest | null {
  try {
    const text = readTextNoFollow(join(dir, "manifest.json"));
    const m = JSON.parse(text ?? "null") as Manifest & { head?: unknown };
    if (m && typeof m === "object") {
      texts.set(m, text!);
      delete m.head; // written anew from the manifest at every write (writeManifest)
    }
    return m && m.version === EVENT_INDEX_VERSION && Number.isSafeInteger(m.gen) && m.gen >= 0 && typeof m.refs === "object" && m.refs && typeof m.sizes === "object" && m.sizes ? m : null;
  } catch {
    return null;
  }
}

const HEAD_START = '{"head":';

/**
 * The manifest's head, when it has one written by this format (readHead's layout) and the refs
 * are as it says (`stamp`); null otherwise: the caller reads the whole manifest.
 */
export function readHead(dir: string, stamp: string): ManifestHead | null {
  // The head's line: JSON.stringify writes no line break, so the first one ends the head, and a
  // manifest written as one line (by a build before heads) has none to give.
  const text = headLine(join(dir, "manifest.json"));
  if (!text?.startsWith(HEAD_START)) return null;
  let h: ManifestHead;
  try {
    h = JSON.parse(text.slice(HEAD_START.length)) as ManifestHead;
  } catch {
    return null;
  }
  if (!h || typeof h !== "object" || h.version !== EVENT_INDEX_VERSION || h.stamp !== stamp || !Number.isSafeInteger(h.gen) || h.gen < 0) return null;
  if (!Array.isArray(h.sizes) || !pairs(h.sizes) || typeof h.places !== "string" || !Number.isSafeInteger(h.width) || h.width < 1 || h.places.length % (h.width + 1) !== 0 || !Array.isArray(h.problems) || typeof h.shared !== "boolean" || !Number.isSafeInteger(h.counted)) return null;
  // The places' text as headOf writes it (refsOfHead reads numbers by position, and stats decodes it whole).
  if (!PLACES.test(h.places)) return null;
  texts.set(h, text);
  return h;
}

const PLACES = /^(?: *\d+,)*$/;

/** [key, length, ...]: each key a string, each length a whole number. */
function pairs(list: unknown[]): boolean {
  if (list.length % 2) return false;
  for (let i = 0; i < list.length; i += 2) if (typeof list[i] !== "string" || !Number.isSafeInteger(list[i + 1]) || (list[i + 1] as number) < 0) return false;
  return true;
}

/** The length of the key file `key` that a manifest or its head covers (0: none). */
export function sizeOf(m: Manifest | ManifestHead, key: string): number {
  if (!Array.isArray(m.sizes)) return m.sizes[key] ?? 0;
  for (let i = 0; i < m.sizes.length; i += 2) if (m.sizes[i] === key) return m.sizes[i + 1] as number;
  return 0;
}

/** How much of the manifest a read of its head takes first. */
const HEAD_READ = 32 * 1024;

/**
 * The manifest's first line, without its line break; null when it has none (or no file). Read
 * no further: at 1,000 tasks the head is 12 KB of a 165 KB file.
 */
function headLine(path: string): string | null {
  const first = readStartNoFollow(path, HEAD_READ);
  if (!first) return null;
  const end = first.indexOf(0x0a);
  if (end >= 0) return first.toString("utf8", 0, end);
  if (first.length < HEAD_READ) return null;
  // A head longer (some 2,500 refs and more): the whole file.
  const text = readTextNoFollow(path);
  const nl = text?.indexOf("\n") ?? -1;
  return nl >= 0 ? text!.slice(0, nl) : null;
}

/** Writes the manifest, headed by `head` (null: none, for refs listed where no stamp tells them apart). */
export function writeManifest(dir: string, m: Manifest, head: ManifestHead | null): void {
  const body = JSON.stringify(m);
  const text = head ? `${HEAD_START}${JSON.stringify(head)}\n,${body.slice(1)}` : body;
  replaceFile(join(dir, "manifest.json"), text);
  texts.set(m, text);
}

/**
 * Removes the manifest, so the next read builds the index again. Given the manifest a damaged read
 * went by, only while that one is still in place: one written since (an update that compacted the
 * key files under the reader) is sound, and the caller reads again through it.
 */
export function dropManifest(dir: string, seen?: Manifest | ManifestHead): void {
  const path = join(dir, "manifest.json");
  // A head: its line (one written since with the same line names the same files, as damaged).
  if (seen && ("refs" in seen ? readTextNoFollow(path) : headLine(path)) !== texts.get(seen)) return;
  rmSync(path, { force: true });
}

/**
 * Writes `text` into the key file at `path` after its first `at` bytes (what the manifest covers)
 * and returns its new length. Lines past `at` are an update's that ended before its manifest: cut
 * off. A file shorter than `at` is Damaged. One fstat more than an append: an update walks commits.
 */
export function appendAt(path: string, text: string, at: number): number {
  const fd = openWriteNoFollow(path, constants.O_CREAT);
  try {
    const size = fstatSync(fd).size;
    if (size < at) throw new Damaged(`${path}: ${size} bytes, the index says ${at}`);
    if (size > at) ftruncateSync(fd, at);
    const b = Buffer.from(text, "utf8");
    for (let done = 0; done < b.length; ) done += writeSync(fd, b, done, b.length - done, at + done);
    return at + b.length;
  } finally {
    closeSync(fd);
  }
}

const genOf = (file: string) => Number(/\.(\d+)\.jsonl$/.exec(file)?.[1] ?? 0);

/** Removes the key files of every generation but `keep`, once the manifest naming it is written. */
export function removeKeyFiles(dir: string, keep: number): void {
  // After a compaction, the generation before it; after a build from scratch, every earlier one
  // (their lines are of ids no longer meant). (The folder is ours, not one a link names: withLock made sure.)
  for (const f of readdirSafe(dir)) if (f.endsWith(".jsonl") && genOf(f) !== keep) rmSync(join(dir, f), { force: true });
}

/** Holds the last generation taken; not a key file, so removeKeyFiles leaves it. */
const GENERATION = "generation";

/**
 * A generation no key file was ever written under: past `after` (the manifest's, for a compaction),
 * past the last one taken, and past every key file on disk (a counter lost, an index of an older
 * version); 0 in a folder that holds none of them. A build from scratch takes one too, not
 * generation 0 again: a reader going by the manifest before it (a damaged index, a version bump,
 * a manifest removed) would read the files rewritten under its names as its own, as it would after
 * a compaction.
 */
export function takeGeneration(dir: string, after = -1): number {
  let last = after;
  const counter = readTextNoFollow(join(dir, GENERATION));
  if (counter !== null && /^\d{1,15}$/.test(counter)) last = Math.max(last, Number(counter));
  for (const f of readdirSafe(dir)) if (f.endsWith(".jsonl")) last = Math.max(last, genOf(f));
  replaceFile(join(dir, GENERATION), String(last + 1));
  return last + 1;
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * Writes every key file again without the lines of dead ref ids (`lineId`: a line's), as a new generation
 * (takeGeneration): the caller writes the manifest, then removes the files of the one before
 * (removeKeyFiles).
 */
export function compact(dir: string, m: Manifest, lineId: (key: string, line: string) => number): void {
  const ids = new Set(Object.values(m.refs).map((r) => r.id));
  const gen = takeGeneration(dir, m.gen);
  for (const key of Object.keys(m.sizes)) {
    const text = readKeyFile(fileOf(dir, key, m.gen), m.sizes[key]!);
    if (text === null) throw new Damaged(`${key}: shorter than the index says`);
    const kept = text.split("\n").filter((l) => l && ids.has(lineId(key, l)));
    const body = kept.length ? kept.join("\n") + "\n" : "";
    replaceFile(fileOf(dir, key, gen), body);
    m.sizes[key] = Buffer.byteLength(body, "utf8");
  }
  m.gen = gen;
  m.total -= m.dead;
  m.dead = 0;
}

/**
 * The first `size` bytes of a key file (what the manifest covers), as text; "" for a file the
 * manifest names no bytes of. Null when the file holds fewer (gone, emptied, cut, a link): damage.
 */
export function readKeyFile(path: string, size: number): string | null {
  let fd: number;
  try {
    fd = openNoFollow(path);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT" && size === 0 ? "" : null;
  }
  try {
    // fstat and one read at 0: the calls readFileSync makes, bounded by the manifest.
    if (fstatSync(fd).size < size) return null;
    return size ? (readAt(fd, 0, size)?.toString("utf8") ?? null) : "";
  } finally {
    closeSync(fd);
  }
}
