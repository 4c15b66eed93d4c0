// The whole task listing of a one-shot view over many tasks, in one file named by the task refs it
// was read from: `.git/handoff/listing-<digest>.json`, the records in listing order. A view such
// as `status --json` at 10,000 tasks then parses one JSON array instead of looking up, parsing and
// sorting 10,000 cached lines (record-cache.ts). The file is named by a quick hash of every task
// ref and its commit and holds that list itself, as lines before the JSON: a reader uses it only
// when the list is exactly the current tips (a strong digest would cost node:crypto's load, more
// than the compare), so the file is the listing of exactly those tips, for ever; any ref that
// moved names another file, and the slower path reads the records (and writes the new file,
// dropping the old one).
// Only views write it (store.keepsRecords), only past LISTING_AT tasks, only listings without
// problems. Beside it, `view-listing.json` holds what a text view reads: the tasks that are not
// final and the final ones a view can show (viewPart), and the counts of the others, so a view
// does not grow with history; before those records, their columns (view-columns.ts), all the
// bounded text parses besides the records it shows. It is keyed by the task refs as the ref files
// hold them (viewKey): the text view at 10,000 tasks then decodes no ref name and hashes nothing. Caches keyed by ref
// tips (DESIGN: thrown away and rebuilt at will).
// Both files hold JSON escaped to ASCII and are decoded as latin1: one byte a character, no UTF-8
// decoding of megabytes, and a string V8 parses a little faster.
import { closeSync, fstatSync, readdirSync, rmSync } from "node:fs";
import { openNoFollow, readNoFollow } from "../git/safe-file.ts";
import { readAt } from "../git/read-at.ts";
import { basename, dirname, join } from "node:path";
import type { RefTip } from "../git/refs.ts";
import { toBytes } from "../git/ref-files.ts";
import { isFinal, type Task, type TaskStatus } from "../core/task.ts";
import { viewTask, type ViewTask } from "../core/view-task.ts";
import { viewTasksOf, type ViewTasks } from "../core/view-tasks.ts";
import { columnsFrom, viewColumns, writeColumns, type ReadColumns, type ViewHead } from "./view-columns.ts";
import { writeSmallFile } from "./small-file.ts";
import { FNV_BASIS, fnv1a32Pair, hex32 } from "../core/fnv.ts";

/** Below this many tasks the per-record cache is quick enough: no listing file. */
export const LISTING_AT = 500;
/** Bumped with any change of the task record's schema too: records are taken unchecked (test/cache-formats.test.ts). */
export const LISTING_VERSION = 4;
/**
 * The view file's own: its records are narrowed (saveViewPart), and a build before that read
 * version 4 as whole records (a priority, a creation time it then lacked); it reads this one as
 * no file and lists again. 6: the columns before the records (view-columns.ts); a build of
 * version 5 reads it as no file (another version), and this one reads a file of 5 as none.
 * Bumped with any change of the task record's schema too (test/cache-formats.test.ts).
 */
export const VIEW_VERSION = 6;
const PREFIX = "listing-";

export class ListingSnapshot<T> {
  private constructor(
    private readonly path: string,
    /** Every task ref and its commit, one a line: what the file must hold to be used. */
    private readonly tips: string,
  ) {}

  /** The snapshot of these tips (sorted by name, as listed), or null when too few to bother. */
  static of<T>(commonDir: string, tips: readonly RefTip[]): ListingSnapshot<T> | null {
    if (tips.length < LISTING_AT) return null;
    let text = "";
    for (const t of tips) text += `${t.name} ${t.oid}\n`;
    return new ListingSnapshot<T>(join(commonDir, "handoff", `${PREFIX}${quickHash(text)}.json`), text);
  }

  /** The records of these tips, or null (no file, a damaged or foreign one, or one of other tips). */
  read(count: number): T[] | null {
    const read = readKeyed<{ tasks?: unknown }>(this.path, [toBytes(this.tips)]);
    return read && Array.isArray(read.tasks) && read.tasks.length === count ? (read.tasks as T[]) : null;
  }

  /** Best effort: writes the listing, and removes the listings of earlier tips. */
  save(tasks: readonly T[]): void {
    writeKeyed(this.path, [toBytes(this.tips)], { tasks });
    const dir = dirname(this.path);
    try {
      // The write made sure `dir` is a folder, not a link to one (small-file.ts): only ours are listed and removed.
      for (const f of readdirSync(dir)) if (f.startsWith(PREFIX) && f !== basename(this.path) && f.endsWith(".json")) rmSync(join(dir, f), { force: true });
    } catch {
      /* an old listing left behind is only disk space */
    }
  }
}

/**
 * A file's key: the refs it was read from, as text of one char a byte (latin1), in parts written
 * one after the other. Parts, not one string: joined, the 680 KB run of packed-refs lines would be
 * copied once more, and on this machine every page a command fills shows in its time.
 */
export type FileKey = readonly string[];

const CHUNK = 1 << 16;
let scratch: Buffer | null = null;

/** Where the rest of `bytes` begins when it starts with `key` (compared a chunk at a time through one small buffer), else null. */
export function startsWithKey(bytes: Buffer, key: FileKey): number | null {
  scratch ??= Buffer.allocUnsafe(CHUNK);
  let at = 0;
  for (const part of key) {
    for (let from = 0; from < part.length; from += CHUNK) {
      const n = scratch.write(part.slice(from, from + CHUNK), 0, "latin1");
      if (at + n > bytes.length || bytes.compare(scratch, 0, n, at, at + n) !== 0) return null;
      at += n;
    }
  }
  return at;
}

/**
 * A file is its key (the refs it was read from), then the JSON of what was read: the key is
 * compared as bytes before anything is parsed (at 10,000 tasks it is 680 KB, which inside the JSON
 * cost a string to decode and compare), and a file of other refs is never parsed at all.
 */
function readKeyed<R>(path: string, key: FileKey, version = LISTING_VERSION): (R & { version: number }) | null {
  const bytes = readNoFollow(path);
  if (!bytes) return null;
  const at = startsWithKey(bytes, key);
  if (at === null || bytes[at] !== 0x7b) return null;
  try {
    const read = JSON.parse(bytes.toString("latin1", at)) as (R & { version?: number }) | null;
    return read?.version === version ? (read as R & { version: number }) : null;
  } catch {
    return null;
  }
}

/** Best effort: `key`, then `body` (with the version) as JSON escaped to ASCII, so latin1 decodes it. */
function writeKeyed(path: string, key: FileKey, body: object): void {
  writeKeyedText(path, key, asciiJson(JSON.stringify({ version: LISTING_VERSION, ...body })));
}

/** `key`, then `text` (ASCII: one byte a character). */
function writeKeyedText(path: string, key: FileKey, text: string): void {
  writeSmallFile(path, Buffer.concat([...key.map((part) => Buffer.from(part, "latin1")), Buffer.from(text, "latin1")]));
}

/** JSON text with every character past ASCII escaped (\uXXXX; surrogate halves apart, JSON.parse joins them). */
export function asciiJson(json: string): string {
  return json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** The view part's file: one a repository, the view of the task refs its key names. */
const VIEW_FILE = "view-listing.json";

/** What decides a one-shot listing of the task refs where refs are files (ref-files.ts `listParts`). */
export interface ListedParts {
  loose: Map<string, string>;
  packedRun: () => string | null;
}

/**
 * The key of the view file: the task refs' lines in packed-refs as the file holds them (sorted, as
 * git writes it), then the loose task ref files. They decide the listing exactly (loose files win),
 * as the tips do, without decoding 10,000 names or hashing them; each part is preceded by its size,
 * so no two keys run into each other. Null for a packed-refs file not in order (written by hand).
 */
export function viewKey(parts: ListedParts): FileKey | null {
  const run = parts.packedRun();
  if (run === null) return null;
  let loose = "";
  for (const [name, oid] of [...parts.loose].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) loose += `${name} ${oid}\n`;
  loose = toBytes(loose);
  return [`packed ${run.length}\n`, run, `loose ${loose.length}\n${loose}`];
}

/**
 * The view part saved under `key`, or null (no file, a damaged one, or one of other refs). The
 * bounded text reads the key and the columns before `tasks` and, through the file kept open until
 * `close`, only the records it shows (viewColumns): at 10,000 tasks 1.1 of 3.4 MB. `whole` (status
 * --all) parses every record, and so does a file whose records are not where the columns say
 * (written by another hand).
 */
export function readViewPart(commonDir: string, key: FileKey, opts: { whole?: boolean } = {}): ViewPart | null {
  const path = join(commonDir, "handoff", VIEW_FILE);
  if (!opts.whole) {
    const part = columnsPart(path, key);
    if (part !== undefined) return part;
  }
  const read = readKeyed<Partial<ViewPart> & { tasks?: unknown }>(path, key, VIEW_VERSION);
  return read && Array.isArray(read.tasks) && read.counted && typeof read.counted === "object" ? { tasks: viewTasksOf(read.tasks as ViewTask[]), counted: read.counted } : null;
}

/** What separates the file's columns from its records (no JSON string holds it: its quote is bare). */
const TASKS_AT = ',"tasks":[';
const COLUMNS_AT = ',"columns":';
/** Records read from the file a window at a time: the ones a bounded text shows are mostly the first. */
const WINDOW = 1 << 16;

/** The part read from the columns, null for no file, one of another version or damaged, undefined when only the whole parse can tell. */
function columnsPart(path: string, key: FileKey): ViewPart | null | undefined {
  let fd: number;
  try {
    fd = openNoFollow(path);
  } catch {
    return null;
  }
  let part: ViewPart | null | undefined = null;
  try {
    part = columnsOf(fd, path, key);
  } catch {
    /* damaged: as none */
  }
  if (!part) closeSync(fd);
  return part;
}

/** columnsPart of the open file `fd`: the part keeps it open (its `close`) for the records asked for. */
function columnsOf(fd: number, path: string, key: FileKey): ViewPart | null | undefined {
  const size = fstatSync(fd).size;
  let keyLength = 0;
  for (const part of key) keyLength += part.length;
  // The key and the columns (a little less than the key at 10,000 tasks), more read only if they run past.
  let length = Math.min(size, 2 * keyLength + WINDOW);
  let bytes = readAt(fd, 0, length);
  const at = bytes ? startsWithKey(bytes, key) : null;
  if (!bytes || at === null || bytes[at] !== 0x7b) return null;
  let split = bytes.indexOf(TASKS_AT, at, "latin1");
  while (split < 0 && length < size) {
    length = Math.min(size, 2 * length);
    bytes = readAt(fd, 0, length)!;
    split = bytes.indexOf(TASKS_AT, at, "latin1");
  }
  const head = split < 0 ? null : readHead(bytes, at, split);
  if (!head) return null;
  const { columns: c } = head;
  const n = c.c.ids.length;
  const list = split + TASKS_AT.length - 1;
  // The records run from `[` to `]`, then the object's `}` closes the file: anything else, the whole parse.
  if (list + c.at[n]! + 1 !== size || readAt(fd, list + c.at[n]! - 1, 1)?.[0] !== 0x5d) return undefined;
  let open = true;
  let window = { from: 0, bytes };
  const text = (i: number) => {
    const [from, to] = [list + c.at[i]!, list + c.at[i + 1]! - 1];
    if (!open) throw new Error(`${path}: a record asked for after the view was read`);
    if (from < window.from || to > window.from + window.bytes.length) window = { from, bytes: readAt(fd, from, Math.min(size - from, Math.max(WINDOW, to - from)))! };
    return window.bytes.toString("latin1", from - window.from, to - window.from);
  };
  const close = () => {
    if (open) closeSync(fd);
    open = false;
  };
  return { tasks: viewColumns(c, text), counted: head.counted, close };
}

/** The version, counts and columns (decoded) between the key's end (`at`) and the records (`split`), or null. */
function readHead(bytes: Buffer, at: number, split: number): { counted: ViewPart["counted"]; columns: ReadColumns } | null {
  // The columns parsed from their own text: the 400 KB are not copied again into `{...}`.
  const columnsAt = bytes.indexOf(COLUMNS_AT, at, "latin1");
  if (columnsAt < 0 || columnsAt > split) return null;
  try {
    const head = JSON.parse(`${bytes.toString("latin1", at, columnsAt)}}`) as Partial<ViewHead> | null;
    if (head?.version !== VIEW_VERSION || !head.counted || typeof head.counted !== "object") return null;
    const columns = columnsFrom(bytes, columnsAt + COLUMNS_AT.length, split);
    return columns && { counted: head.counted, columns };
  } catch {
    return null;
  }
}

/**
 * Best effort: saves the view part of the listing `key` names (written only past LISTING_AT tasks),
 * each record narrowed to what a view reads (core/view-task.ts), after the columns the walks over
 * every task read (writeColumns), so the bounded text parses those and the records it shows only.
 */
export function saveViewPart(commonDir: string, key: FileKey, part: { tasks: readonly ViewTask[]; counted: ViewPart["counted"] }): void {
  const records = part.tasks.map((t) => asciiJson(JSON.stringify(viewTask(t))));
  const head = asciiJson(JSON.stringify({ version: VIEW_VERSION, counted: part.counted, columns: writeColumns(part.tasks, records) }));
  const body = `${head.slice(0, -1)}${TASKS_AT}${records.join(",")}]}`;
  writeKeyedText(join(commonDir, "handoff", VIEW_FILE), key, body);
}

/** Two FNV-1a hashes of `text` (different offset bases) in hex: a file name, checked by content. */
function quickHash(text: string): string {
  // Both in one pass over the text (10,000 tips are 680,000 characters).
  const [a, b] = fnv1a32Pair(text, FNV_BASIS, FNV_BASIS ^ 0x9e3779b9);
  return hex32(a) + hex32(b);
}

/** What a text view reads of a listing: the tasks it can show, in listing order, and the count of the others by status. */
export interface ViewPart {
  tasks: ViewTasks;
  /** Read from the view file's columns: closes the file the records are read from (none is read after). */
  close?: () => void;
  counted: Partial<Record<TaskStatus, number>>;
}

/**
 * The tasks a text view can show: every task not final, and the final ones it may still name (a
 * task not final waits on it; it carries handoffs, which fill inboxes). The other final tasks,
 * history, are only counted. A file lease naming a task left out is the caller's to check.
 */
export function viewPart(tasks: readonly Task[]): { tasks: Task[]; counted: ViewPart["counted"] } {
  const named = new Set<string>();
  for (const t of tasks) if (!isFinal(t.status)) for (const dep of t.after ?? []) named.add(dep);
  const kept: Task[] = [];
  const counted: Partial<Record<TaskStatus, number>> = {};
  for (const t of tasks) {
    if (!isFinal(t.status) || t.handoffs?.length || named.has(t.id)) kept.push(t);
    else counted[t.status] = (counted[t.status] ?? 0) + 1;
  }
  return { tasks: kept, counted };
}
