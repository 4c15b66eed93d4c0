// The file a one-shot bounded listing reads (`task list --limit N`): `.git/handoff/task-order.json`,
// every task's record on a line of its own, then a tail that says, per task, what the orders and
// the counts need (its stored status, its claim's expiry, its place best first, newest first and
// by id) and where its line is. A listing of N tasks then parses N records, not 10,000.
//
// The tail is keyed by the task refs as the ref files hold them (record-cache-listing `viewKey`),
// like the view file. When refs moved, task-order.ts patches the file: it is copied in the kernel,
// its tail cut off, the lines of the records that moved appended and a new tail written; the
// other lines are never read or written by the process (5 MB at 10,000 tasks: ~17 ms read and
// written on this machine, ~3 ms copied). The lines replaced stay behind as garbage until it
// outweighs the rest, when the file is written afresh in age order.
//
//   <record line>\n ...              anywhere before the tail
//   packed <n>\n<run>loose <n>\n...  the key (the tail starts here)
//   <head size>\n
//   {"version":..,"codes":..,"garbage":..,"little":..} padded to 8 bytes, then each task's
//   numbers as machine words: expires (float64), best, newest, byId, at, len (uint32), flags (a byte)
//   task-order <tail offset> <a name of this file's own>, padded to TRAILER bytes\n
//
// Latin1 text of ASCII JSON, as the other listing files, and machine words (the file says whether
// they are little-endian). A cache (DESIGN: thrown away and rebuilt at will): anything out of
// shape is no file.
import { closeSync, constants, copyFileSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from "node:fs";
import { openNoFollow } from "../git/safe-file.ts";
import { join } from "node:path";
import { TASK_STATUSES, type Task, type TaskStatus } from "../core/task.ts";
import { uniqueSuffix } from "../git/unique-name.ts";
import { readAt } from "../git/read-at.ts";
import { asciiJson, startsWithKey, type FileKey } from "./record-cache-listing.ts";
import { replaceByRename, tempBeside, unlinkQuiet, writeSmallFile } from "./small-file.ts";
import { statusOfCode } from "./task-order-status.ts";

/** Bumped with any change of the task record's schema too: records are taken unchecked (test/cache-formats.test.ts). */
export const ORDER_FILE_VERSION = 1;
const FILE = "task-order.json";
const TRAILER = 48;
/** The sizes line after the key: a number and a newline. */
const SIZE_AT_MOST = 24;
/** Bytes of machine words a task takes: expires (8), best, newest, byId, at, len (4 each), flags (1). */
const WORDS = 29;
/** Whether this machine's words are little-endian (the file says which it was written on). */
const LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Records parsed from order files by this process (what the tests check a listing parses). */
export const recordsParsed = { count: 0 };

export const orderFile = (commonDir: string) => join(commonDir, "handoff", FILE);

/** What the readers need of every task, by its place oldest first. */
export interface OrderHead {
  /** Each task's stored status, one letter a task (statusCode). */
  codes: string;
  /** A claimed task's expiry (ms since the epoch; 0 when it has none or it does not parse). */
  expires: ArrayLike<number>;
  /** Places, best first (priority, age, id: the order claim --next takes). */
  best: ArrayLike<number>;
  /** Places, most recently changed first. */
  newest: ArrayLike<number>;
  /** Places by id (code unit order): where a moved ref's task is, by a binary search. */
  byId: ArrayLike<number>;
  /** What else decides whether a task is ready (flagsOf): its record must be read to say. */
  flags: ArrayLike<number>;
}

/** A task that waits on others. */
export const WAITS = 1;
/** A task addressed to some agents or machines only. */
export const ADDRESSED = 2;

/** The place of task `id` among `byId` (places in id order), `idAt` giving a place's id; undefined when none. */
export function placeById(byId: ArrayLike<number>, idAt: (i: number) => string, id: string): number | undefined {
  let lo = 0;
  let hi = byId.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const other = idAt(byId[mid]!);
    if (other === id) return byId[mid]!;
    if (other < id) lo = mid + 1;
    else hi = mid;
  }
  return undefined;
}

/** The flags of a task (OrderHead.flags). */
export function flagsOf(t: Task): number {
  return (t.after?.length ? WAITS : 0) | (t.to ? ADDRESSED : 0);
}

export const statusCode = (s: TaskStatus) => String.fromCharCode(97 + TASK_STATUSES.indexOf(s));

/** `length` bytes of the file `fd` at `at`, or null past `end`. */
function bytesAt(fd: number, end: number, at: number, length: number): Buffer | null {
  return at < 0 || length < 0 || at + length > end ? null : readAt(fd, at, length);
}

/**
 * A task order file open: its head, and its record lines read and parsed on demand (read in part:
 * its key compared, the head, then one line per record asked for).
 */
export class OrderFile {
  private constructor(
    private readonly path: string,
    private readonly fd: number,
    readonly head: OrderHead,
    /** Where each record's line is. */
    private readonly at: Uint32Array,
    private readonly len: Uint32Array,
    /** Where the tail starts: the lines end there. */
    readonly tailAt: number,
    /** Bytes of lines no task points at any more. */
    readonly garbage: number,
    /** The key the file was written under, when its tail was read whole (readTail). */
    private readonly tail: { packedRun: string; loose: string } | null,
    /** The last line, which names this very file (a patch checks it copied this one). */
    readonly trailer: string,
  ) {}

  get count(): number {
    return this.head.codes.length;
  }

  /** The line of the record at place `i`, newline included (throws a SyntaxError when it is not one). */
  line(i: number): Buffer {
    const b = bytesAt(this.fd, this.tailAt, this.at[i]!, this.len[i]!);
    if (!b || b[b.length - 1] !== 0x0a) throw new SyntaxError("task order file: a line out of place");
    return b;
  }

  /** Where the line of the record at place `i` starts, and its length. */
  lineAt(i: number): number {
    return this.at[i]!;
  }

  lineLength(i: number): number {
    return this.len[i]!;
  }

  /**
   * The record at place `i`, parsed now. A line out of shape throws a SyntaxError, and the file is
   * removed first: the next listing writes it anew (a patch would copy the damaged line along).
   */
  record(i: number): Task {
    recordsParsed.count++;
    try {
      const b = this.line(i);
      return JSON.parse(b.toString("latin1", 0, b.length - 1)) as Task;
    } catch (e) {
      if (e instanceof SyntaxError) unlinkQuiet(this.path);
      throw e;
    }
  }

  /** The place of task `id`, or undefined (a binary search by id, each step a record parsed). */
  placeOf(id: string): number | undefined {
    return placeById(this.head.byId, (i) => this.record(i).id, id);
  }

  /** The key the file was written under (record-cache-listing `viewKey`'s parts): from readTail only. */
  writtenKey(): { packedRun: string; loose: string } | null {
    return this.tail;
  }

  close(): void {
    closeSync(this.fd);
  }

  /** The file at `path` if its tail starts with `key`, its head in shape (close it after); else null. */
  static read(path: string, key: FileKey): OrderFile | null {
    return OrderFile.open(path, (fd, end, tailAt) => {
      let keyLength = 0;
      for (const part of key) keyLength += part.length;
      const first = bytesAt(fd, end, tailAt, Math.min(end - tailAt, keyLength + SIZE_AT_MOST));
      const keyEnd = first && startsWithKey(first, key);
      return typeof keyEnd === "number" ? { keyEnd: tailAt + keyEnd, size: first!.subarray(keyEnd), tail: null } : null;
    });
  }

  /** The file at `path` whatever key it was written under, its key read whole (to patch it); or null. */
  static readTail(path: string): OrderFile | null {
    return OrderFile.open(path, (fd, end, tailAt) => {
      const tail = bytesAt(fd, end, tailAt, end - tailAt);
      const key = tail && keyIn(tail);
      return key ? { keyEnd: tailAt + key.end, size: tail!.subarray(key.end, key.end + SIZE_AT_MOST), tail: key } : null;
    });
  }

  private static open(path: string, keyed: (fd: number, end: number, tailAt: number) => { keyEnd: number; size: Buffer; tail: OrderFile["tail"] } | null): OrderFile | null {
    let fd: number;
    try {
      fd = openNoFollow(path);
    } catch {
      return null;
    }
    let file: OrderFile | null = null;
    try {
      const end = fstatSync(fd).size - TRAILER;
      const trailer = bytesAt(fd, end + TRAILER, end, TRAILER)?.toString("latin1");
      const m = trailer && /^task-order (\d+) [0-9a-z_]+ *\n$/.exec(trailer);
      const tailAt = m ? Number(m[1]) : NaN;
      const k = Number.isSafeInteger(tailAt) && tailAt <= end ? keyed(fd, end, tailAt) : null;
      if (k) file = OrderFile.parse(path, fd, end, tailAt, k.keyEnd, k.size, k.tail, trailer!);
    } catch {
      file = null;
    }
    if (!file) closeSync(fd);
    return file;
  }

  /** After the key (ending at `keyEnd`): the size line (in `size`, read with the key), then the head up to `end`. */
  private static parse(path: string, fd: number, end: number, tailAt: number, keyEnd: number, size: Buffer, tail: OrderFile["tail"], trailer: string): OrderFile | null {
    const nl = size.indexOf(0x0a);
    const headLength = nl < 0 ? NaN : Number(size.toString("latin1", 0, nl));
    const headAt = keyEnd + nl + 1;
    if (!Number.isSafeInteger(headLength) || headAt + headLength !== end) return null;
    // Its own buffer (offset 0), so the words after the padded JSON line are aligned for the views.
    const head = Buffer.allocUnsafeSlow(headLength);
    if (readSync(fd, head, 0, headLength, headAt) !== headLength) return null;
    const jsonEnd = head.indexOf(0x0a);
    let h: { version?: unknown; codes?: unknown; garbage?: unknown; little?: unknown };
    try {
      h = JSON.parse(head.toString("latin1", 0, jsonEnd < 0 ? 0 : jsonEnd));
    } catch {
      return null;
    }
    if (!h || h.version !== ORDER_FILE_VERSION || h.little !== LITTLE || typeof h.codes !== "string" || !/^[a-z]*$/.test(h.codes)) return null;
    const n = h.codes.length;
    const w = jsonEnd + 1;
    if (w % 8 !== 0 || headLength !== w + n * WORDS) return null;
    const expires = new Float64Array(head.buffer, w, n);
    const [best, newest, byId, at, len] = [8, 12, 16, 20, 24].map((k) => new Uint32Array(head.buffer, w + k * n, n)) as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array];
    const flags = new Uint8Array(head.buffer, w + 28 * n, n);
    for (let i = 0; i < n; i++) {
      if (!statusOfCode(h.codes.charCodeAt(i)) || best[i]! >= n || newest[i]! >= n || byId[i]! >= n) return null;
      // Each line within the lines (a line itself is checked when it is read).
      if (len[i]! < 2 || at[i]! + len[i]! > tailAt) return null;
    }
    const garbage = typeof h.garbage === "number" ? h.garbage : Infinity;
    return new OrderFile(path, fd, { codes: h.codes, expires, best, newest, byId, flags }, at, len, tailAt, garbage, tail, trailer);
  }
}

/** The two sized parts of a file's key (viewKey), and where the key ends; null when out of shape. */
function keyIn(b: Buffer): { packedRun: string; loose: string; end: number } | null {
  const sized = (from: number, word: string): [number, number] | null => {
    if (b.toString("latin1", from, from + word.length) !== word) return null;
    const nl = b.indexOf(0x0a, from);
    const n = nl < 0 ? NaN : Number(b.toString("latin1", from + word.length, nl));
    return Number.isSafeInteger(n) && n >= 0 && nl + 1 + n <= b.length ? [n, nl + 1] : null;
  };
  const p = sized(0, "packed ");
  const l = p && sized(p[1] + p[0], "loose ");
  return l ? { packedRun: b.toString("latin1", p[1], p[1] + p[0]), loose: b.toString("latin1", l[1], l[1] + l[0]), end: l[1] + l[0] } : null;
}

/** A claimed task's expiry as the head holds it. */
export function expiryOf(t: Task): number {
  if (t.status !== "claimed" || !t.claim) return 0;
  const ms = Date.parse(t.claim.expires_at);
  return Number.isFinite(ms) ? ms : 0;
}

/** A record's line: its JSON escaped to ASCII, then a newline. */
export const recordLine = (t: Task): Buffer => Buffer.from(asciiJson(JSON.stringify(t)) + "\n", "latin1");

/** The tail: the key, the head's size, the head (the lines at `at`, `len` long), the trailer naming where the tail starts. */
function tailOf(key: FileKey, tailAt: number, head: OrderHead, at: ArrayLike<number>, len: ArrayLike<number>, garbage: number): Buffer[] {
  const n = head.codes.length;
  let json = asciiJson(JSON.stringify({ version: ORDER_FILE_VERSION, codes: head.codes, garbage, little: LITTLE }));
  json = json.padEnd(Math.ceil((json.length + 1) / 8) * 8 - 1) + "\n";
  const words = Buffer.allocUnsafeSlow(n * WORDS);
  const w = words.buffer;
  new Float64Array(w, 0, n).set(head.expires);
  new Uint32Array(w, 8 * n, n).set(head.best);
  new Uint32Array(w, 12 * n, n).set(head.newest);
  new Uint32Array(w, 16 * n, n).set(head.byId);
  new Uint32Array(w, 20 * n, n).set(at);
  new Uint32Array(w, 24 * n, n).set(len);
  new Uint8Array(w, 28 * n, n).set(head.flags);
  const trailer = `task-order ${tailAt} ${uniqueSuffix()}`.padEnd(TRAILER - 1) + "\n";
  return [...key.map((part) => Buffer.from(part, "latin1")), Buffer.from(`${json.length + words.length}\n${json}`, "latin1"), words, Buffer.from(trailer, "latin1")];
}

/** Best effort: a new file of `key` holding `lines` (each a record and its newline) in this order. */
export function writeOrderFile(path: string, key: FileKey, head: OrderHead, lines: readonly Buffer[]): void {
  const at = new Float64Array(lines.length);
  const len = new Float64Array(lines.length);
  let end = 0;
  lines.forEach((l, i) => {
    at[i] = end;
    len[i] = l.length;
    end += l.length;
  });
  if (end >= 2 ** 32) return; // offsets are 32-bit words: no cache that large
  // Written piece by piece, not joined first: one 5 MB copy less.
  writeSmallFile(path, [...lines, ...tailOf(key, end, head, at, len, 0)]);
}

/**
 * Best effort: `old`'s file copied (in the kernel), its tail cut off, the `added` lines appended
 * (the records that moved), then the tail of `key`. `from` gives each task's line: the line of
 * place `from[i]` in the old file (kept where it is), or for -1 - j, added line j.
 */
export function patchOrderFile(path: string, old: OrderFile, key: FileKey, head: OrderHead, from: ArrayLike<number>, added: readonly Buffer[], garbage: number): void {
  const tmp = tempBeside(path);
  let fd: number | null = null;
  try {
    // A new file (O_EXCL: never through a link at its name); `old`'s trailer below proves the copy.
    copyFileSync(path, tmp, constants.COPYFILE_EXCL);
    fd = openSync(tmp, "r+");
    // The very file `old` read, not one another process put there since (its lines would be
    // elsewhere): its last line names it.
    const size = fstatSync(fd).size;
    if (bytesAt(fd, size, size - TRAILER, TRAILER)?.toString("latin1") !== old.trailer) throw new Error("replaced meanwhile");
    ftruncateSync(fd, old.tailAt);
    let end = old.tailAt;
    const placed: number[] = [];
    for (const b of added) {
      writeAll(fd, b, end);
      placed.push(end);
      end += b.length;
    }
    if (end >= 2 ** 32) throw new Error("too large");
    const at = new Float64Array(from.length);
    const len = new Float64Array(from.length);
    for (let i = 0; i < from.length; i++) {
      const f = from[i]!;
      at[i] = f >= 0 ? old.lineAt(f) : placed[-1 - f]!;
      len[i] = f >= 0 ? old.lineLength(f) : added[-1 - f]!.length;
    }
    for (const b of tailOf(key, end, head, at, len, garbage)) {
      writeAll(fd, b, end);
      end += b.length;
    }
    closeSync(fd);
    fd = null;
    replaceByRename(tmp, path);
  } catch {
    if (fd !== null) closeSync(fd);
    unlinkQuiet(tmp);
  }
}

function writeAll(fd: number, b: Buffer, at: number): void {
  for (let done = 0; done < b.length; ) done += writeSync(fd, b, done, b.length - done, at + done);
}
