import { isAscii } from "node:buffer";
import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import { isObjectIdText, loopFirst } from "../core/char-scan.ts";
import type { ConfigRead } from "./config-read.ts";
import type { RefTip } from "./refs.ts";
import { readListedRefText, readRefText } from "./ref-text.ts";
import { WatchedRefFolder } from "./ref-watch.ts";

/** How many names RefFiles keeps as present before it starts again (a listing of 10,000 tasks reads fewer). */
const PRESENT_LIMIT = 50_000;

/**
 * Reads shared refs straight from the files backend (loose ref files, then `packed-refs`), saving
 * a git spawn per read. Safe because git replaces both files by rename, and because a stale read
 * only makes the following compare-and-swap fail and retry. Repositories on another ref backend
 * (reftable) are detected by the caller, which then asks git instead.
 */
export class RefFiles {
  private packed: { mtimeMs: number; size: number; ino: number; refs: PackedRefs } | null = null;

  /** Folders followed by a watch (`listFollowed`), and the last sorted listing of each. */
  private readonly followed = new Map<string, { folder: WatchedRefFolder; last: Listed | null }>();

  /**
   * The most loose ref files one `list` call read: a one-shot command that read many packs them
   * afterwards (pack-refs.ts), so the next one reads one file instead.
   */
  looseListed = 0;

  /** Refs last found as loose files by readLoose: read without asking first whether they are there. */
  private readonly present = new Set<string>();

  constructor(private readonly commonDir: string) {}

  /**
   * True when this repository stores refs in files (the only backend git 2.39 has by default).
   * `read`: its config as the caller's opening of the repository read it (config-read.ts).
   */
  static usable(commonDir: string, read?: ConfigRead): boolean {
    let config: string | null | undefined;
    try {
      config = read ? read.file(`${commonDir}/config`)?.text : readFileSync(`${commonDir}/config`, "utf8");
    } catch {
      return false;
    }
    if (config == null) return false;
    // Asked of the opening's parse where there is one (config-read.ts ConfigRead.plain), else of the text.
    const parsed = read?.plain(`${commonDir}/config`);
    return parsed ? !parsed.entries.some((e) => e.key === "refstorage" && e.value !== null) : !/^\s*refstorage\s*=/im.test(config);
  }

  read(name: string): string | null {
    const loose = this.readLoose(name);
    if (loose !== undefined) return loose;
    return this.packedRefs().get(name) ?? null;
  }

  /** The ref's value in packed-refs alone (what git reads when there is no loose file). */
  readPacked(name: string): string | null {
    return this.packedRefs().get(name) ?? null;
  }

  /**
   * Whether packed-refs holds a ref that a new ref `name` would clash with: `name` itself, a ref
   * named like one of its folders, or a ref inside `name` as a folder (git refuses those names).
   */
  packedClash(name: string): boolean {
    const packed = this.packedRefs();
    if (packed.has(name)) return true;
    for (let i = name.indexOf("/"); i > 0; i = name.indexOf("/", i + 1)) if (packed.has(name.slice(0, i))) return true;
    return packed.hasUnder(`${name}/`);
  }

  /** The refs under `prefix`; `loose`: its loose refs as the caller read them (listParts). */
  list(prefix: string, loose?: Map<string, string>): RefTip[] {
    const parts = this.listParts(prefix, loose);
    return mergeSorted(parts.packed(), parts.loose);
  }

  /**
   * `list(prefix)` in its two parts, for a caller that keeps what it derives from the packed part
   * by the file's identity (claimed-index.ts): the loose refs, read now (first, as in `list`), and
   * packed-refs' identity with its refs under `prefix`, decoded only when asked. git replaces
   * packed-refs by renaming a new file over it, and rewrites it whenever a ref it holds is deleted
   * or packed, so one identity is one content.
   */
  listParts(prefix: string, loose = this.looseUnder(prefix)): { loose: Map<string, string>; packedId: string; packed: () => RefTip[]; packedRun: () => string | null; readPacked: (name: string) => string | null } {
    // Loose files first, packed-refs second: `git pack-refs` writes the new packed-refs before it
    // deletes the loose files, so a ref packed meanwhile is in one or the other; read the other
    // way round, it could be in neither (sync and the views pack refs while others read). `loose`:
    // as the caller read them before (a record of them, store/ref-folder-record.ts).
    if (loose.size > this.looseListed) this.looseListed = loose.size;
    const packed = this.packedRefs();
    const packedId = this.packed ? identity(this.packed) : "none";
    return { loose, packedId, packed: () => packed.under(prefix), packedRun: () => packed.run(prefix), readPacked: (name) => packed.get(name) ?? null };
  }

  /** The loose refs under `prefix`, read now: `listParts`' first part. */
  looseUnder(prefix: string): Map<string, string> {
    const loose = new Map<string, string>();
    this.walkTop(folderOf(prefix), loose);
    return loose;
  }

  /**
   * What the refs under `prefixes` (and the refs `names`) are, as one string that changes whenever
   * any of them does: every loose file's name and value, then packed-refs' identity (a stat,
   * nothing read). Loose files first, as in `listParts`: a ref packed meanwhile shows in one or the
   * other.
   */
  stamp(prefixes: string[], names: string[] = []): string {
    const loose = new Map<string, string>();
    for (const prefix of prefixes) this.walkTop(folderOf(prefix), loose);
    for (const name of names) {
      const value = this.readLoose(name);
      if (value) loose.set(name, value);
    }
    const st = this.packedStat();
    return stampText(loose, st ? identity(st) : "none");
  }

  /**
   * `list` of each of `prefixes` and `read` of each of `names`, each file read once, with the
   * `stamp(prefixes, names)` of exactly what was read: the loose values as read and the identity
   * packed-refs had before it was read (a file replaced meanwhile gives a stamp older than the
   * text, which a later stamp never equals; so does one replaced between the prefixes' reads).
   */
  listStamped(prefixes: string[], names: string[]): { lists: RefTip[][]; values: (string | null)[]; stamp: string } {
    const loose = new Map<string, string>();
    const ids = new Set<string>();
    const lists = prefixes.map((prefix) => {
      const parts = this.listParts(prefix);
      ids.add(parts.packedId);
      for (const [name, oid] of parts.loose) loose.set(name, oid);
      return mergeSorted(parts.packed(), parts.loose);
    });
    const values = names.map((name) => {
      const value = this.readLoose(name);
      if (value) loose.set(name, value);
      const packed = this.packedRefs();
      ids.add(this.packed ? identity(this.packed) : "none");
      return value ?? packed.get(name) ?? null;
    });
    return { lists, values, stamp: stampText(loose, ids.size === 1 ? [...ids][0]! : `moved while read (${[...ids].join(" ")})`) };
  }

  /**
   * `list` for long-running processes: a flat folder's loose refs are followed by a watch
   * (ref-watch.ts) instead of read file by file. Unchanged since the last call: the same array.
   */
  listFollowed(prefix: string): RefTip[] {
    const dirRef = folderOf(prefix);
    let f = this.followed.get(dirRef);
    if (!f) this.followed.set(dirRef, (f = { folder: new WatchedRefFolder(this.commonDir, dirRef, (n, listed) => this.readLoose(n, listed), (d) => this.walkFolder(d)), last: null }));
    // Loose before packed, as in `list`.
    const loose = f.folder.list();
    const packed = this.packedRefs();
    if (f.last && f.last.version === f.folder.version && f.last.packed === packed) return f.last.tips;
    // A few refs moved (the usual case): patch the last listing instead of rebuilding 10,000 entries.
    const patched = f.last && f.last.packed === packed ? patch(f.last, f.folder.changedSince(f.last.version), loose, packed) : null;
    if (patched) {
      f.last = { version: f.folder.version, packed, tips: patched, at: f.last!.at };
      return patched;
    }
    const found = new Map<string, string>();
    for (const { name, oid } of packed.under(prefix)) found.set(name, oid);
    for (const [name, oid] of loose) found.set(name, oid);
    // The same names as last time (refs moved, none came or went): keep the order, skip the sort.
    const same = f.last && f.last.tips.length === found.size && f.last.tips.every((t) => found.has(t.name));
    const tips = same
      ? f.last!.tips.map((t) => ({ name: t.name, oid: found.get(t.name)! }))
      : [...found.entries()].sort(([a], [b]) => byName(a, b)).map(([name, oid]) => ({ name, oid }));
    f.last = { version: f.folder.version, packed, tips, at: null };
    return tips;
  }

  /** This process wrote these refs: followed folders read them again. */
  touch(names: string[]): void {
    for (const f of this.followed.values()) f.folder.touch(names);
  }

  close(): void {
    for (const f of this.followed.values()) f.folder.close();
    this.followed.clear();
  }

  private walkFolder(dirRef: string): { refs: Map<string, string>; nested: boolean } {
    const refs = new Map<string, string>();
    const nested = this.walk(dirRef, refs);
    return { refs, nested };
  }

  /** undefined: no loose file (look in packed-refs); a string: the ref's value. */
  private readLoose(name: string, listed = false): string | null | undefined {
    const path = `${this.commonDir}/${name}`;
    // A missing ref (an agent that never declared a session, a packed ref) is asked first: a
    // thrown ENOENT costs several times the extra stat of a ref that is there. A ref this process
    // last found as a file (a claim reads about ten), or one a folder listing just named, is
    // opened straight away.
    const present = listed || this.present.has(name);
    if (!present && !existsSync(path)) return undefined;
    let text: string;
    try {
      text = readRefText(path);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") {
        this.present.delete(name);
        return undefined;
      }
      throw e;
    }
    if (!present) {
      if (this.present.size >= PRESENT_LIMIT) this.present.clear();
      this.present.add(name);
    }
    return objectIdOf(text);
  }

  /**
   * `walk` from a prefix's folder, which is often not there (no ref held back from the sync remote
   * yet, none newer): asked first, as readLoose asks for a ref, since the listing of a missing
   * folder is a thrown ENOENT (~60 us in a cold process; a pre-edit hook lists the refs held back
   * from the sync remote before it answers).
   */
  private walkTop(dirRef: string, found: Map<string, string>): void {
    if (existsSync(`${this.commonDir}/${dirRef}`)) this.walk(dirRef, found);
  }

  /**
   * Every loose ref under `dirRef` into `found`; true when `dirRef` holds folders of its own. A
   * plain listing: each name is read as a ref file (readListedRefText), and one that is a folder
   * says so by its read's EISDIR; a link, a FIFO or a socket is passed over, as a listing with file
   * types passed over all but files and folders. A `.lock` name is no ref (a writer's lock): only a
   * folder so named is walked, as before.
   */
  private walk(dirRef: string, found: Map<string, string>): boolean {
    let names: string[];
    try {
      names = readdirSync(`${this.commonDir}/${dirRef}`);
    } catch {
      return false;
    }
    let nested = false;
    for (const n of names) {
      const name = `${dirRef}/${n}`;
      const kind = n.endsWith(".lock") ? (this.typeOf(name) === "folder" ? "folder" : null) : this.readListed(name);
      if (kind === "folder") {
        nested = true;
        this.walk(name, found);
      } else if (kind) found.set(name, kind);
    }
    return nested;
  }

  /** A listed name's ref value, "folder", or null (no ref: gone, a link, a FIFO, not an object id). */
  private readListed(name: string): string | null {
    let text: string;
    try {
      text = readListedRefText(`${this.commonDir}/${name}`);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EISDIR") return "folder";
      if (code === "ENOENT" || code === "ENOTDIR") {
        this.present.delete(name);
        return null;
      }
      // A link (ELOOP), a FIFO a writer holds (EAGAIN), a socket (ENXIO), or what else would not
      // open: told apart as a listing with types did, a file read as readLoose reads one.
      const type = this.typeOf(name);
      if (type === "folder") return "folder";
      return type === "file" ? (this.readLoose(name, true) ?? null) : null;
    }
    return objectIdOf(text) ?? null;
  }

  private typeOf(name: string): "folder" | "file" | null {
    try {
      const st = lstatSync(`${this.commonDir}/${name}`);
      return st.isDirectory() ? "folder" : st.isFile() ? "file" : null;
    } catch {
      return null;
    }
  }

  private packedStat(): { mtimeMs: number; size: number; ino: number } | undefined {
    try {
      return statSync(`${this.commonDir}/packed-refs`, { throwIfNoEntry: false }); // most clones have none: no error made for it
    } catch {
      return undefined;
    }
  }

  private packedRefs(): PackedRefs {
    const st = this.packedStat();
    if (!st) {
      this.packed = null;
      return NO_PACKED_REFS; // always the same object: listings compare it by identity
    }
    // git replaces packed-refs by renaming a new file over it: a new inode, even when a repack in
    // the same clock tick leaves the time and the size as they were (a ref's value changed).
    if (this.packed && sameFile(this.packed, st)) return this.packed.refs;
    // Another reader of the same repository in this process may have read this very file (the
    // policy's and the store's readers: at 10,000 tasks, 689 KB read and its memory taken twice).
    const shared = SHARED_PACKED.get(this.commonDir);
    if (shared && sameFile(shared, st)) {
      this.packed = shared;
      return shared.refs;
    }
    const bytes = readFileSync(`${this.commonDir}/packed-refs`);
    const refs = new PackedRefs(bytes.toString("latin1"), isAscii(bytes));
    this.packed = { mtimeMs: st.mtimeMs, size: st.size, ino: st.ino, refs };
    // A process that opens many repositories (a test run, a dashboard of several) keeps a few.
    if (SHARED_PACKED.size >= SHARED_PACKED_MAX && !SHARED_PACKED.has(this.commonDir)) SHARED_PACKED.delete(SHARED_PACKED.keys().next().value!);
    SHARED_PACKED.set(this.commonDir, this.packed);
    return refs;
  }
}

const isObjectId = loopFirst(isObjectIdText, /^[0-9a-f]{40,64}$/);

/** A loose ref file's object id; undefined for anything else (symbolic refs have no place under refs/handoff/: as a missing ref file). */
function objectIdOf(text: string): string | undefined {
  const value = text.trim();
  return isObjectId(value) ? value : undefined;
}

/** The last packed-refs read in this process per repository folder, by its identity (RefFiles.packedRefs). */
const SHARED_PACKED = new Map<string, { mtimeMs: number; size: number; ino: number; refs: PackedRefs }>();
const SHARED_PACKED_MAX = 8;

type FileIdentity = { ino: number; size: number; mtimeMs: number };
const sameFile = (a: FileIdentity, b: FileIdentity): boolean => a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino;

/** packed-refs' identity: git renames a new file over it, so one identity is one content. */
const identity = (st: { ino: number; size: number; mtimeMs: number }): string => `${st.ino}:${st.size}:${st.mtimeMs}`;

/** A stamp's text: every loose ref as `<oid> <name>`, sorted, then packed-refs' identity. */
function stampText(loose: Map<string, string>, packedId: string): string {
  const lines = [...loose].map(([name, oid]) => `${oid} ${name}`).sort(byName);
  lines.push(`packed ${packedId}`);
  return lines.join("\n");
}

export const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * packed-refs, read as git reads it. A file whose header has the `sorted` trait (git writes it so)
 * is searched where it lies, by bisection over its lines as git does (packed-backend.c), so a read
 * or a prefix's run decodes only the lines it returns: a one-shot command in a clone of 5,000
 * tasks (10,000 packed refs) reads one or two refs (`task show`, a hook's `check`: the policy's
 * branch, a task), and splitting the whole file into strings first took 10 ms of its 80, plus the
 * collections after. A file without the trait (hand-edited) is parsed whole and looked up by name,
 * as git sorts such a file before reading it. The text is kept as latin1 (one char per byte), so
 * comparisons are git's byte order; names beyond ASCII are decoded as UTF-8 when returned.
 */
class PackedRefs {
  /** Where the first ref line starts (after the header). */
  private readonly first: number;
  private readonly sorted: boolean;
  private all: Map<string, string> | null = null;
  /** Runs already decoded, by prefix: a long-running process lists the same families again and again. */
  private readonly runs = new Map<string, readonly RefTip[]>();

  /** Whether the file is all ASCII (what git and we write): names need no decoding then. */
  private readonly ascii: boolean;

  constructor(
    private readonly text: string,
    ascii?: boolean,
  ) {
    this.ascii = ascii ?? !/[\x80-\xff]/.test(text);
    const header = text.startsWith("# pack-refs with:") ? text.slice(0, text.indexOf("\n") + 1 || text.length) : "";
    this.first = header.length;
    this.sorted = header !== "" && / sorted( |\n|$)/.test(header); // no pattern run for no header (NO_PACKED_REFS, at every start)
  }

  get(name: string): string | undefined {
    if (!this.sorted) return this.parsed().get(name);
    const key = toBytes(name);
    const at = this.lowerBound(key);
    return at < this.text.length && this.nameOf(at) === key ? this.oidOf(at) : undefined;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** Whether any packed ref's name starts with `prefix`. */
  hasUnder(prefix: string): boolean {
    if (!this.sorted) return [...this.parsed().keys()].some((n) => n.startsWith(prefix));
    const key = toBytes(prefix);
    const at = this.lowerBound(key);
    return at < this.text.length && this.nameOf(at).startsWith(key);
  }

  /**
   * The refs under `prefix` in name order: the run of a sorted file (packed-refs as git writes it:
   * found by a binary search, already in order; a view lists four families of 10,000 refs each
   * call), else those of every ref, the last line of a name winning. A new array each call
   * (callers may add to it); the entries are shared and never changed.
   */
  under(prefix: string): RefTip[] {
    return this.range(prefix) ?? [...this.parsed()].filter(([n]) => n.startsWith(prefix)).sort(([a], [b]) => byName(a, b)).map(([name, oid]) => ({ name, oid }));
  }

  /**
   * The lines of the refs under `prefix` as the file holds them (latin1: one char a byte, peeled
   * lines included), for a sorted file; null when the file is not in order. They and the loose
   * files decide `under` exactly, so a cache keyed by them need not decode 10,000 names.
   */
  run(prefix: string): string | null {
    // No packed-refs at all (a new clone's refs are loose): no lines.
    if (!this.sorted) return this.text.length === this.first ? "" : null;
    const key = toBytes(prefix);
    const start = this.lowerBound(key);
    // The run ends where the names reach the prefix with its last byte one higher: a second search,
    // not a walk of every line.
    const last = key.charCodeAt(key.length - 1);
    let end = key && last < 0xff ? this.lowerBound(key.slice(0, -1) + String.fromCharCode(last + 1)) : start;
    while (end < this.text.length && this.nameOf(end).startsWith(key)) end = this.nextRecord(end);
    return this.text.slice(start, end);
  }

  /** `under` for a sorted file; null when the file is not in order. */
  private range(prefix: string): RefTip[] | null {
    if (!this.sorted) return null;
    const known = this.runs.get(prefix);
    if (known) return known.slice();
    const key = toBytes(prefix);
    const out: RefTip[] = [];
    for (let at = this.lowerBound(key); at < this.text.length; at = this.nextRecord(at)) {
      const name = this.nameOf(at);
      if (!name.startsWith(key)) break;
      out.push({ name: this.ascii ? name : fromBytes(name), oid: this.oidOf(at) });
    }
    if (this.runs.size < 16) this.runs.set(prefix, out);
    return out.slice();
  }

  /** The start of the first record whose name is not before `key` (the text's length: none). */
  private lowerBound(key: string): number {
    let lo = this.first;
    let hi = this.text.length;
    while (lo < hi) {
      const rec = this.recordStart(lo + ((hi - lo) >>> 1), lo);
      if (this.nameOf(rec) < key) lo = this.nextRecord(rec);
      else hi = rec;
    }
    return lo;
  }

  /** The start of the record holding `at`: its ref line, not a peeled line (`^<oid>`) under it. */
  private recordStart(at: number, floor: number): number {
    let p = this.text.lastIndexOf("\n", at - 1) + 1;
    while (p > floor && this.text.charCodeAt(p) === 0x5e) p = this.text.lastIndexOf("\n", p - 2) + 1;
    return Math.max(p, floor);
  }

  /** The start of the record after the one at `rec` (past its peeled line, if any). */
  private nextRecord(rec: number): number {
    let nl = this.text.indexOf("\n", rec);
    if (nl < 0) return this.text.length;
    while (this.text.charCodeAt(nl + 1) === 0x5e) {
      nl = this.text.indexOf("\n", nl + 1);
      if (nl < 0) return this.text.length;
    }
    return nl + 1;
  }

  private nameOf(rec: number): string {
    const sp = this.text.indexOf(" ", rec);
    let nl = this.text.indexOf("\n", rec);
    if (nl < 0) nl = this.text.length;
    return sp < 0 || sp > nl ? "" : this.text.slice(sp + 1, nl);
  }

  private oidOf(rec: number): string {
    return this.text.slice(rec, this.text.indexOf(" ", rec));
  }

  /** Every ref of a file not in order, by name (a name packed twice, by hand: the last line wins). */
  private parsed(): Map<string, string> {
    if (!this.all) {
      this.all = new Map();
      for (const line of this.text.split("\n")) {
        if (!line || line[0] === "#" || line[0] === "^") continue;
        const sp = line.indexOf(" ");
        if (sp < 0) continue;
        this.all.set(this.ascii ? line.slice(sp + 1) : fromBytes(line.slice(sp + 1)), line.slice(0, sp));
      }
    }
    return this.all;
  }
}

/** A name as the file's latin1 text holds it (its UTF-8 bytes, one char each; ASCII is itself). */
export function toBytes(name: string): string {
  return /[^\x00-\x7f]/.test(name) ? Buffer.from(name, "utf8").toString("latin1") : name;
}

/** A name from the file's latin1 text, decoded as the UTF-8 it is. */
export function fromBytes(text: string): string {
  return /[\x80-\xff]/.test(text) ? Buffer.from(text, "latin1").toString("utf8") : text;
}

/** A sorted packed run with the loose refs laid over it (a loose file wins, as git reads them). */
export function mergeSorted(packed: RefTip[], loose: Map<string, string>): RefTip[] {
  if (!loose.size) return packed;
  const extra = [...loose].sort(([a], [b]) => byName(a, b));
  const out: RefTip[] = [];
  let i = 0;
  for (const [name, oid] of extra) {
    while (i < packed.length && packed[i]!.name < name) out.push(packed[i++]!);
    if (i < packed.length && packed[i]!.name === name) i++;
    out.push({ name, oid });
  }
  while (i < packed.length) out.push(packed[i++]!);
  return out;
}

const NO_PACKED_REFS = new PackedRefs("", true);

/** The refs of packed-refs lines as PackedRefs reads them (`run`: a file's lines, a header or not), under `prefix`, by name. */
export function packedLines(run: string, prefix: string): RefTip[] {
  return new PackedRefs(run).under(prefix);
}

/** A followed folder's last listing; `at` (where each name is) is made on first need. */
interface Listed {
  version: number;
  packed: unknown;
  tips: RefTip[];
  at: Map<string, number> | null;
}

/**
 * The last listing with the values of `changed` refs read again, or null when a ref came or went
 * (the order changes: the caller sorts again) or the changes are not known.
 */
function patch(last: Listed, changed: string[] | null, loose: Map<string, string>, packed: PackedRefs): RefTip[] | null {
  if (!changed) return null;
  last.at ??= new Map(last.tips.map((t, i) => [t.name, i]));
  let tips: RefTip[] | null = null;
  const moved: number[] = [];
  for (const name of changed) {
    const i = last.at.get(name);
    const oid = loose.get(name) ?? packed.get(name);
    if (i === undefined) {
      if (oid === undefined || name.endsWith(".lock")) continue; // a lock file came and went
      return null;
    }
    if (oid === undefined) return null;
    if (last.tips[i]!.oid === oid) continue;
    tips ??= last.tips.slice();
    tips[i] = { name, oid };
    moved.push(i);
  }
  if (tips) {
    // One step back only: the listing before keeps no link of its own, so no chain of old
    // listings stays alive behind the current one.
    movedFrom.delete(last.tips);
    movedFrom.set(tips, { from: last.tips, moved });
  }
  // Nothing moved (only lock files came and went): the very same array, as callers key on it.
  return tips ?? last.tips;
}

/** Listings patched from the one before: which positions moved (the same names, in the same order). */
const movedFrom = new WeakMap<RefTip[], { from: RefTip[]; moved: number[] }>();

/**
 * For a listing `listFollowed` patched from its last one: that listing and the positions whose
 * values differ (a long-running reader of 10,000 tasks then reads the moved ones only, instead of
 * comparing every tip). Undefined for any other listing.
 */
export function movedSince(tips: RefTip[]): { from: RefTip[]; moved: readonly number[] } | undefined {
  return movedFrom.get(tips);
}

/** A ref prefix's folder: `refs/handoff/log/` without its slash (no pattern to compile in a cold process). */
function folderOf(prefix: string): string {
  return prefix.endsWith("/") ? prefix.slice(0, -1) : prefix;
}
