// Decoded task records on disk for one-shot processes: `.git/handoff/tasks-<FORMAT>.cache`, one
// line per record, `<commit id>\t<record as JSON>`. A commit id names its content, so a line is the record
// of that commit for ever; a one-shot `task list` or `claim --next` over 10,000 tasks then parses
// 10,000 short JSON lines instead of reading, inflating and validating 30,000 objects. Only
// records that passed validation are written; a torn or foreign line is ignored and read again
// from git. A cache keyed by ref tips (DESIGN: thrown away and rebuilt at will). New lines are
// appended (one write(2) with O_APPEND: a claim adds one record to a file of 10,000 without
// rewriting it); the file is rewritten whole only to drop lines past MAX_LINES or a torn line.
//
// A record a process wrote itself is added too, as `<commit id>\t!<commit>,<tree>,<blob>\t<JSON>`:
// the next one-shot command (the hook's check after a claim, the next claim's listing) then reads
// no object. Until a ref points at those objects a prune may remove them, and a record whose
// objects are gone must be read from git (which says so): such a line counts only while its three
// objects are there as loose files; otherwise the record is read from git and, if sound, cached
// as a plain line.
//
// A line is the record as one build's schema decoded it, and is taken without the schema's check:
// a build must never read lines another task schema wrote (an upgrade; an older CLI beside a newer
// one on one clone). The format is part of the file's name, so another build's file is none to
// this one; a test pins it to the task schema's fingerprint (test/cache-formats.test.ts). The file
// of an earlier format (and `tasks.cache`, the builds before formats) is removed when this build
// starts its own file: only then, so nothing is added to the hot path, and never a later format's
// file, so two builds on one clone do not take turns removing each other's.
import { closeSync, fstatSync, readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { readAt } from "../git/read-at.ts";
import { appendNoFollow, openNoFollow, readNoFollow } from "../git/safe-file.ts";
import { readSmallFile, unlinkQuiet, writeSmallFile } from "./small-file.ts";

/** The format of the lines, part of the file's name: bumped with any change of the task record's schema. */
export const TASKS_CACHE_FORMAT = 1;
/** The file of `format` (another build's, in a test) under the clone's common dir. */
export function tasksCacheFile(commonDir: string, format = TASKS_CACHE_FORMAT): string {
  return `${commonDir}/handoff/tasks-${format}.cache`;
}
/** The names of the files of earlier formats: `tasks.cache` (before formats) and `tasks-<n>.cache`. */
const EARLIER = /^tasks(?:-(\d+))?\.cache$/;

/** Lines kept at most; past it, only the records this process used are kept. */
const MAX_LINES = 50_000;

/**
 * Lookups answered by searching the file's bytes before it is parsed whole. A one-shot claim asks
 * for a record or two: splitting a 10,000-line file into a map for them cost more than reading
 * the objects would have; a listing asks for every record, and past this many it parses the file.
 */
const SEARCHED_LOOKUPS = 32;

/**
 * Lookups this few look in the file's last TAIL bytes first: a patch of the task order file after
 * a claim asks for the record the claim just appended, where reading the 4 MB file whole takes
 * 11 ms on this machine (and reading the record from git, its schema's set-up about as much).
 */
const FEW_LOOKUPS = 8;
const TAIL = 1 << 16;

export class RecordCache {
  private lines: Map<string, string> | null = null;
  /** The file's bytes while it is searched, not parsed (null: no file; undefined: not read yet). */
  private bytes: Buffer | null | undefined = undefined;
  /** Lines this process added or dropped while the file is searched (a null value: dropped). */
  private readonly changed = new Map<string, string | null>();
  private searched = 0;
  /** The caller asks for a few records only (expect): the file's end is searched before it is read whole. */
  private tailFirst = false;
  /** The file's last TAIL bytes (null: no file), read on the first lookup that searches them. */
  private tail: Buffer | null | undefined = undefined;
  private readonly used = new Set<string>();
  /** Lines this process added, not yet on disk. */
  private fresh: string[] = [];
  /** A line of the file was torn or foreign: the next flush rewrites the file without it. */
  private damaged = false;

  constructor(
    private readonly path: string,
    /** Whether these objects are all there, loose (a line this process did not verify names them). */
    private readonly present: (oids: string[]) => boolean,
  ) {}

  private load(): Map<string, string> {
    if (this.lines) return this.lines;
    const lines = new Map<string, string>();
    const text = this.bytes !== undefined ? (this.bytes?.toString("utf8") ?? null) : readSmallFile(this.path);
    if (text) {
      for (const line of text.split("\n")) {
        const tab = line.indexOf("\t");
        if (tab > 0) lines.set(line.slice(0, tab), line.slice(tab + 1));
      }
    }
    for (const [oid, line] of this.changed) {
      if (line === null) lines.delete(oid);
      else lines.set(oid, line);
    }
    this.changed.clear();
    this.bytes = undefined;
    return (this.lines = lines);
  }

  /**
   * A caller about to ask for `lookups` records (a listing of every task): past SEARCHED_LOOKUPS the
   * file is parsed at the first lookup, not searched 32 times first (each search a scan of the
   * file's bytes: 25 ms of a one-shot `task list` at 10,000 tasks); up to FEW_LOOKUPS, the end of
   * the file is searched before the whole of it is read.
   */
  expect(lookups: number): void {
    if (lookups > SEARCHED_LOOKUPS) this.searched = SEARCHED_LOOKUPS;
    else if (lookups <= FEW_LOOKUPS) this.tailFirst = true;
  }

  /** The line cached for `oid` (after its tab), as load() would keep it: the file's last one. */
  private lineOf(oid: string): string | undefined {
    if (this.lines) return this.lines.get(oid);
    if (++this.searched > SEARCHED_LOOKUPS) return this.load().get(oid);
    if (this.changed.has(oid)) return this.changed.get(oid) ?? undefined;
    if (this.tailFirst && this.bytes === undefined) {
      const line = this.lineInTail(oid);
      if (line !== undefined) return line;
    }
    if (this.bytes === undefined) this.bytes = readNoFollow(this.path);
    return this.bytes ? lastLineOf(this.bytes, oid, true) : undefined;
  }

  /** The line for `oid` when the file's last TAIL bytes hold one (the last in the file, then), else undefined. */
  private lineInTail(oid: string): string | undefined {
    if (this.tail === undefined) {
      this.tail = null;
      let fd: number | null = null;
      try {
        fd = openNoFollow(this.path);
        const size = fstatSync(fd).size;
        this.tail = readAt(fd, size - Math.min(size, TAIL), Math.min(size, TAIL));
      } catch {
        /* no file: the whole read says so */
      } finally {
        if (fd !== null) closeSync(fd);
      }
    }
    return this.tail ? lastLineOf(this.tail, oid, false) : undefined;
  }

  /** The record cached for `oid`, or undefined. */
  get(oid: string): unknown {
    let line = this.lineOf(oid);
    if (line === undefined) return undefined;
    if (line.startsWith("!")) {
      const tab = line.indexOf("\t");
      if (tab < 0 || !this.present(line.slice(1, tab).split(","))) return undefined;
      line = line.slice(tab + 1);
    }
    try {
      const record = JSON.parse(line) as unknown;
      this.used.add(oid);
      return record;
    } catch {
      if (this.lines) this.lines.delete(oid);
      else this.changed.set(oid, null);
      this.damaged = true;
      return undefined;
    }
  }

  /** A record this process wrote at commit `oid` (its commit, tree and blob `objects`). */
  note(oid: string, record: unknown, objects: string[]): void {
    const line = `!${objects.join(",")}\t${JSON.stringify(record)}`;
    if (this.lines) this.lines.set(oid, line);
    else this.changed.set(oid, line);
    this.used.add(oid);
    this.fresh.push(`${oid}\t${line}\n`);
  }

  /** A record just read and validated from git. */
  put(oid: string, record: unknown): void {
    if (this.lineOf(oid)?.startsWith("!") === false) return;
    const json = JSON.stringify(record);
    if (this.lines) this.lines.set(oid, json);
    else this.changed.set(oid, json);
    this.used.add(oid);
    this.fresh.push(`${oid}\t${json}\n`);
  }

  /**
   * Saves the records this process added (best effort): appended, or, past MAX_LINES, the file
   * rewritten with only the records this process used (replaced by rename).
   */
  flush(): void {
    if (!this.fresh.length) return;
    const added = this.fresh.join("");
    this.fresh = [];
    // A damaged line seen while searching: parse the whole file now, to write it anew without it.
    if (this.damaged) this.load();
    if (this.lines && (this.damaged || this.lines.size > MAX_LINES)) {
      const keep = this.lines.size > MAX_LINES ? [...this.lines].filter(([oid]) => this.used.has(oid)) : [...this.lines];
      writeSmallFile(this.path, keep.map(([oid, json]) => `${oid}\t${json}`).join("\n") + "\n");
      this.damaged = false;
      return;
    }
    try {
      // Led by a newline: a last line torn by a process that died mid-write then stays a line of
      // its own, which load() ignores or get() drops (no tab, or bad JSON); empty lines are skipped.
      if (appendNoFollow(this.path, "\n" + added, false)) return;
    } catch {
      /* written whole below */
    }
    writeSmallFile(this.path, added);
    removeEarlier(this.path);
  }
}

/** Best effort: removes the files of formats before the one of `path` (this build's file, just begun). */
function removeEarlier(path: string): void {
  const dir = dirname(path);
  const ours = Number(EARLIER.exec(basename(path))?.[1] ?? NaN);
  try {
    for (const name of readdirSync(dir)) {
      const m = EARLIER.exec(name);
      if (m && (m[1] === undefined || Number(m[1]) < ours)) unlinkQuiet(join(dir, name));
    }
  } catch {
    /* an earlier file left behind is only disk space: nothing reads it */
  }
}

/**
 * The last line for `oid` in `b` (after its tab), or undefined. `whole`: `b` is the whole file, so
 * a line at its very start counts and a last line without its newline runs to the end; else `b`
 * is the file's end, and only lines it holds whole count.
 */
function lastLineOf(b: Buffer, oid: string, whole: boolean): string | undefined {
  const at = b.lastIndexOf(`\n${oid}\t`, undefined, "latin1");
  const start = at >= 0 ? at + 1 : whole && b.subarray(0, oid.length + 1).toString("latin1") === `${oid}\t` ? 0 : -1;
  if (start < 0) return undefined;
  const end = b.indexOf(10, start);
  if (end < 0 && !whole) return undefined;
  return b.toString("utf8", start + oid.length + 1, end < 0 ? b.length : end);
}
