// Objects in the repository's own packs, read in process. Records a one-shot command reads are
// mostly loose (this tool writes them so), but after `git gc`, or a fetch that kept its pack, an
// agent's or a lease's record is packed, and reading it meant starting `git cat-file --batch`:
// ~20-25 ms with child_process's own load (a `task show` after `git gc`: 173 against 152 ms).
// The pack's .idx (version 2) is searched as git searches it (fan-out, then a binary search of the
// sorted names), the entry read up to where the next one starts, inflated, and its delta applied
// to its base (gitformat-pack); what comes out is hashed and must be the object its id names.
// Anything else (an .idx of another version, a multi-pack index alone, an entry out of shape, a
// base in another pack) is not an answer here: the caller asks cat-file, which reads every layout
// git has and says what is wrong in its own words.
import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
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

  constructor(private readonly objectsDir: string) {}

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
      .map((n) => new PackIndex(`${this.objectsDir}/pack/${n.slice(0, -4)}`, n));
  }
}

/** One pack: its .idx read on first need, its .pack opened on first read. */
class PackIndex {
  private idx: Buffer | null | undefined = undefined;
  private count = 0;
  private width = 0;
  private fd: number | null = null;
  private packSize = 0;
  /** Every entry's offset, sorted: where the entry after one starts (made on first read). */
  private sorted: Float64Array | null = null;

  constructor(
    private readonly base: string,
    readonly name: string,
  ) {}

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  /** The .idx, checked: version 2, names of one width; null when it is not one we read. */
  private index(width: number): Buffer | null {
    if (this.idx !== undefined) return this.width === width ? this.idx : null;
    this.idx = null;
    try {
      const idx = readFileSync(`${this.base}.idx`);
      if (idx.length < 8 + 1024 || idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) return null;
      const count = idx.readUInt32BE(8 + 255 * 4);
      // Header, fan-out, names, CRCs, offsets, then the two checksums (large offsets between).
      if (idx.length < 8 + 1024 + count * (width + 8) + 2 * width) return null;
      this.count = count;
      this.width = width;
      this.idx = idx;
    } catch {
      this.idx = null;
    }
    return this.idx;
  }

  /** Where the object `name` starts in the pack, or -1. */
  offsetOf(name: Buffer): number {
    const idx = this.index(name.length);
    if (!idx) return -1;
    const w = name.length;
    const first = name[0]!;
    let lo = first === 0 ? 0 : idx.readUInt32BE(8 + (first - 1) * 4);
    let hi = idx.readUInt32BE(8 + first * 4);
    if (lo > hi || hi > this.count) return -1; // a fan-out out of shape: git's to read
    const names = 8 + 1024;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      // The name at `mid` against the one looked for.
      const c = idx.compare(name, 0, w, names + mid * w, names + (mid + 1) * w);
      if (c === 0) return this.offsetAt(mid);
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  }

  private offsetAt(k: number): number {
    const idx = this.idx!;
    const offsets = 8 + 1024 + this.count * (this.width + 4);
    const small = idx.readUInt32BE(offsets + k * 4);
    if (!(small & 0x80000000)) return small;
    const large = offsets + this.count * 4 + (small & 0x7fffffff) * 8;
    if (large + 8 > idx.length - 2 * this.width) return -1;
    const at = idx.readUInt32BE(large) * 2 ** 32 + idx.readUInt32BE(large + 4);
    return Number.isSafeInteger(at) ? at : -1;
  }

  /** Where the entry after the one at `at` starts (the pack's checksum after the last). */
  private endOf(at: number): number {
    if (!this.sorted) {
      const s = new Float64Array(this.count);
      for (let k = 0; k < this.count; k++) s[k] = this.offsetAt(k);
      this.sorted = s.sort();
    }
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sorted[mid]! <= at) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.sorted.length ? this.sorted[lo]! : this.packSize - this.width;
  }

  /** The object whose entry starts at `at`, its delta applied; `depth` bounds a chain of deltas. */
  objectAt(at: number, depth: number): GitObject | undefined {
    if (at < 12 || depth > PACK_LIMITS.chain) return undefined;
    try {
      if (this.fd === null) {
        this.fd = openSync(`${this.base}.pack`, "r");
        this.packSize = fstatSync(this.fd).size;
      }
      const end = this.endOf(at);
      if (end <= at || end > this.packSize - this.width || end - at > MAX_OBJECT + 64) return undefined;
      const entry = Buffer.allocUnsafe(end - at);
      if (readSync(this.fd, entry, 0, entry.length, at) !== entry.length) return undefined;
      const head = entryHeader(entry, 0, entry.length);
      if (!head || head.size > MAX_OBJECT) return undefined;
      const { code: type, size } = head;
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
      const data = inflateSync(entry.subarray(p));
      if (data.length !== size) return undefined;
      if (!base) return { type: TYPES[type]!, data };
      const out = applyDelta(base.data, data, MAX_OBJECT);
      return out ? { type: base.type, data: out } : undefined;
    } catch {
      return undefined;
    }
  }
}
