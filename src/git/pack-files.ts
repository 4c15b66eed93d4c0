// Objects in the repository's own packs, read in process. Records a one-shot command reads are
// mostly loose (this tool writes them so), but after `git gc`, or a fetch that kept its pack, an
// agent's or a lease's record is packed, and reading it meant starting `git cat-file --batch`:
// ~20-25 ms with child_process's own load (a `task show` after `git gc`: 173 against 152 ms).
// The pack's .idx (version 2) is searched as git searches it (fan-out, then a binary search of the
// sorted names, one fan-out bucket read), the entry read as far as zlib's bound for its size,
// inflated, and its delta applied to its base (gitformat-pack); what comes out is hashed and must be the object its id names.
// Anything else (an .idx of another version, a multi-pack index alone, an entry out of shape, a
// base in another pack) is not an answer here: the caller asks cat-file, which reads every layout
// git has and says what is wrong in its own words.
import { closeSync, fstatSync, openSync, readdirSync } from "node:fs";
import { readAt } from "./read-at.ts";
import { inflateSync } from "node:zlib";
import type { GitObject } from "./object-reader.ts";
import { applyDelta, baseDistance, entryHeader, OFS_DELTA, PACK_LIMITS, REF_DELTA, TYPES } from "./pack-read.ts";
import { sha1Hex } from "./small-object-codec.ts";
import { createHash } from "node:crypto";

/** Objects read from packs at most this large (a record is a few hundred bytes; larger goes to cat-file). */
const MAX_OBJECT = 1024 * 1024;

/** An object's id: SHA-1 in process (small-object-codec.ts), SHA-256 through node:crypto. */
function idOf(o: GitObject, width: number): string {
  const bytes = Buffer.concat([Buffer.from(`${o.type} ${o.data.length}\0`, "latin1"), o.data]);
  return width === 20 ? sha1Hex(bytes) : createHash("sha256").update(bytes).digest("hex");
}

/** The packs of one objects folder, listed when first asked and again when an object is not found. */
export class LocalPacks {
  private packs: PackIndex[] | null = null;
  /** Pack entries inflated so far (each one object's own bytes): what the kept bases save shows here. */
  readonly stats = { inflated: 0 };

  /** `budget`: bytes of resolved objects each pack keeps for deltas built on them. */
  constructor(
    private readonly objectsDir: string,
    private readonly budget = RESOLVED_BUDGET,
  ) {}

  /** The object, or undefined when no pack of ours answers for it (the caller asks git). */
  read(oid: string): GitObject | undefined {
    const found = this.find(oid);
    if (found) return found;
    // A pack written since the listing (a fetch, a repack): listed again, once per miss.
    if (this.relist()) return this.find(oid);
    return undefined;
  }

  close(): void {
    for (const p of this.packs ?? []) p.close();
    this.packs = null;
  }

  /** Bytes of resolved objects the packs hold now (each at most its budget). */
  keptBytes(): number {
    return (this.packs ?? []).reduce((n, p) => n + p.keptBytes(), 0);
  }

  private find(oid: string): GitObject | undefined {
    this.packs ??= this.list();
    const name = Buffer.from(oid, "hex");
    if (name.length * 2 !== oid.length) return undefined;
    for (const p of this.packs) {
      const at = p.offsetOf(name);
      const o = at >= 0 ? p.objectAt(at, 0) : undefined;
      // Checked against its id: an .idx or entry out of shape can name another object's bytes.
      if (o) return idOf(o, name.length) === oid ? o : undefined;
    }
    return undefined;
  }

  /** Lists the packs again; whether the list changed. */
  private relist(): boolean {
    const before = (this.packs ?? []).map((p) => p.name).join("\n");
    const fresh = this.list();
    if (fresh.map((p) => p.name).join("\n") === before) return false;
    this.close();
    this.packs = fresh;
    return true;
  }

  private list(): PackIndex[] {
    let names: string[];
    try {
      names = readdirSync(`${this.objectsDir}/pack`);
    } catch {
      return [];
    }
    return names
      .filter((n) => n.startsWith("pack-") && n.endsWith(".idx"))
      .sort()
      .map((n) => new PackIndex(`${this.objectsDir}/pack/${n.slice(0, -4)}`, n, this.budget, this.stats));
  }
}

/**
 * One pack: its .idx opened on first need and read a piece at a time (the fan-out, one bucket of
 * names, one offset): a pack of a long history holds 140,000 objects, whose 4 MB .idx read whole,
 * and every offset sorted to find where an entry ends, cost a one-shot command more than the
 * cat-file it saves. The .pack is opened on first read.
 */
class PackIndex {
  /**
   * Objects resolved from this pack, by offset, most recently used last (git's delta base cache):
   * git packs records in delta chains up to 50 deep, and each object of a chain was resolved
   * from its root again, fifty inflates a record. A first listing of 1,000 packed task records
   * (a fresh clone, a long-running server's start) took 1.3 s; with the chain's bases kept,
   * each record costs its own inflate and delta. A pack never changes under its name.
   */
  private resolved = new Map<number, GitObject>();
  private resolvedBytes = 0;
  private fd: number | null | undefined = undefined;
  private fanout: Buffer | null = null;
  private count = 0;
  private width = 0;
  private idxSize = 0;
  private packFd: number | null = null;
  private packSize = 0;

  constructor(
    private readonly base: string,
    readonly name: string,
    private readonly budget: number,
    private readonly stats: { inflated: number },
  ) {}

  close(): void {
    if (this.fd) closeSync(this.fd);
    if (this.packFd !== null) closeSync(this.packFd);
    this.fd = undefined;
    this.fanout = null;
    this.packFd = null;
    this.resolved.clear();
    this.resolvedBytes = 0;
  }

  keptBytes(): number {
    let n = 0;
    for (const o of this.resolved.values()) n += o.data.length;
    return n;
  }

  /** The object at `at`, resolved before (moved to the most recent end), or undefined. */
  private recall(at: number): GitObject | undefined {
    const o = this.resolved.get(at);
    if (o) {
      this.resolved.delete(at);
      this.resolved.set(at, o);
    }
    return o;
  }

  /** Keeps a resolved object, dropping the least recently used past the budget. */
  private keep(at: number, o: GitObject): GitObject {
    if (o.data.length > this.budget / 8) return o;
    this.resolved.set(at, o);
    this.resolvedBytes += o.data.length;
    for (const [k, old] of this.resolved) {
      if (this.resolvedBytes <= this.budget) break;
      this.resolved.delete(k);
      this.resolvedBytes -= old.data.length;
    }
    return o;
  }

  /** Reads exactly `length` bytes of the .idx at `at`, or null. */
  private readIdx(at: number, length: number): Buffer | null {
    return at + length > this.idxSize ? null : readAt(this.fd!, at, length);
  }

  /** The .idx opened and its header checked: version 2, names of `width` bytes; false when it is not one we read. */
  private open(width: number): boolean {
    if (this.fd === undefined) {
      this.fd = null;
      try {
        this.fd = openSync(`${this.base}.idx`, "r");
        this.idxSize = fstatSync(this.fd).size;
        const head = this.readIdx(0, 8 + 1024);
        if (!head || head.readUInt32BE(0) !== 0xff744f63 || head.readUInt32BE(4) !== 2) return false;
        this.fanout = head;
        this.count = head.readUInt32BE(8 + 255 * 4);
        // Header, fan-out, names, CRCs, offsets, then the two checksums (large offsets between).
        // An .idx v2 does not say its hash: the first name looked up does (the repository's own).
        this.width = width;
        if (this.idxSize < 8 + 1024 + this.count * (width + 8) + 2 * width) this.fanout = null;
      } catch {
        this.fanout = null;
      }
    }
    return this.fanout !== null && this.width === width;
  }

  /** Where the object `name` starts in the pack, or -1. */
  offsetOf(name: Buffer): number {
    const w = name.length;
    if (!this.open(w)) return -1;
    const fanout = this.fanout!;
    const first = name[0]!;
    const lo = first === 0 ? 0 : fanout.readUInt32BE(8 + (first - 1) * 4);
    const hi = fanout.readUInt32BE(8 + first * 4);
    if (lo > hi || hi > this.count) return -1; // a fan-out out of shape: git's to read
    if (lo === hi) return -1;
    // The names of this first byte, in one read, searched as git searches them.
    const names = this.readIdx(8 + 1024 + lo * w, (hi - lo) * w);
    if (!names) return -1;
    let a = 0;
    let b = hi - lo;
    while (a < b) {
      const mid = (a + b) >>> 1;
      const c = names.compare(name, 0, w, mid * w, (mid + 1) * w);
      if (c === 0) return this.offsetAt(lo + mid);
      if (c < 0) a = mid + 1;
      else b = mid;
    }
    return -1;
  }

  private offsetAt(k: number): number {
    const offsets = 8 + 1024 + this.count * (this.width + 4);
    const small = this.readIdx(offsets + k * 4, 4)?.readUInt32BE(0);
    if (small === undefined) return -1;
    if (!(small & 0x80000000)) return small;
    const large = offsets + this.count * 4 + (small & 0x7fffffff) * 8;
    if (large + 8 > this.idxSize - 2 * this.width) return -1;
    const b = this.readIdx(large, 8);
    const at = b ? b.readUInt32BE(0) * 2 ** 32 + b.readUInt32BE(4) : -1;
    return Number.isSafeInteger(at) ? at : -1;
  }

  /**
   * The object whose entry starts at `at`, its delta applied; `depth` bounds a chain of deltas.
   * The entry is read as far as its data can reach compressed (zlib's bound for its size, plus
   * the header): inflating stops at the stream's end, and a stream cut short is no answer.
   */
  objectAt(at: number, depth: number): GitObject | undefined {
    if (at < 12 || depth > PACK_LIMITS.chain) return undefined;
    const known = this.recall(at);
    if (known) return known;
    try {
      if (this.packFd === null) {
        this.packFd = openSync(`${this.base}.pack`, "r");
        this.packSize = fstatSync(this.packFd).size;
      }
      const end = this.packSize - this.width;
      if (at >= end) return undefined;
      const first = readAt(this.packFd, at, Math.min(HEAD_READ, end - at));
      if (!first) return undefined;
      const head = entryHeader(first, 0, first.length);
      if (!head || head.size > MAX_OBJECT) return undefined;
      const { code: type, size } = head;
      const room = head.pos + this.width + 16 + size + (size >> 10) + 64;
      const entry = room > first.length && end - at > first.length ? readAt(this.packFd, at, Math.min(room, end - at)) : first;
      if (!entry) return undefined;
      let p = head.pos;
      let base: GitObject | undefined;
      if (type === OFS_DELTA) {
        const d = p < entry.length ? baseDistance(entry, p, entry.length) : null;
        if (!d) return undefined;
        p = d.pos;
        base = this.objectAt(at - d.back, depth + 1);
      } else if (type === REF_DELTA) {
        const name = entry.subarray(p, p + this.width);
        p += this.width;
        const baseAt = name.length === this.width ? this.offsetOf(Buffer.from(name)) : -1;
        base = baseAt >= 0 ? this.objectAt(baseAt, depth + 1) : undefined;
      } else if (!TYPES[type]) return undefined;
      if ((type === OFS_DELTA || type === REF_DELTA) && !base) return undefined;
      // Inflated into a buffer of its own size (the entry says it): zlib's default 16 KB chunk was
      // a fresh allocation per object, most of a first listing's garbage.
      const data = inflateSync(entry.subarray(p), { chunkSize: Math.max(64, size + 1) });
      this.stats.inflated++;
      if (data.length !== size) return undefined;
      if (!base) return this.keep(at, { type: TYPES[type]!, data });
      const out = applyDelta(base.data, data, MAX_OBJECT);
      return out ? this.keep(at, { type: base.type, data: out }) : undefined;
    } catch {
      return undefined;
    }
  }
}

/** Bytes of resolved objects a pack keeps for the deltas that build on them (git's own default is 96 MB). */
const RESOLVED_BUDGET = 16 * 1024 * 1024;

/** The first read of an entry: its header and, for a small record, all of it. */
const HEAD_READ = 512;
