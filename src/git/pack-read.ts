// Reading a pack a remote sent (gitformat-pack): every object, deltas applied, each id computed
// here from its content, the trailing checksum checked. What comes in is another machine's bytes:
// every size, offset and count is bounded. A pack past a bound is refused as such (PackBound): the
// fetch is refused, never handed to git, which would write what the remote sent to disk before
// judging it. So is a pack out of shape (PackShape, saying what is wrong), never a guess: handed to
// git, the same remote could answer git's fetch with what no bound here would have let in.
import { createHash } from "node:crypto";
import { inflateSync } from "node:zlib";
import type { GitObject, ObjectType } from "./object-reader.ts";
import { PACK_LIMITS } from "./pack-limits.ts";

export { PACK_LIMITS };

/** A pack past one of PACK_LIMITS: which bound, in words. */
export interface PackBound {
  bound: string;
}

/** A pack that is not well formed: what is wrong with it, in words. */
export interface PackShape {
  shape: string;
}

/** A pack entry's type code for a whole object (6 and 7 are the two kinds of delta). */
export const TYPES: Record<number, ObjectType> = { 1: "commit", 2: "tree", 3: "blob", 4: "tag" };
export const OFS_DELTA = 6;
export const REF_DELTA = 7;

/**
 * The header of the pack entry at `pos` (gitformat-pack): its type code and inflated size (4 bits,
 * then 7 a byte) and where what follows it starts; null when it runs past `end` or out of bounds.
 */
export function entryHeader(pack: Buffer, pos: number, end: number): { code: number; size: number; pos: number } | null {
  let c = pack[pos++]!;
  const code = (c >> 4) & 7;
  let size = c & 15;
  for (let shift = 4; c & 0x80; shift += 7) {
    if (pos >= end || shift > 35) return null;
    c = pack[pos++]!;
    size += (c & 0x7f) * 2 ** shift;
  }
  return { code, size, pos };
}

/**
 * An OFS_DELTA's distance back to its base at `pos`: big-endian base-128 with one added per
 * continuation byte; null when it runs past `end` or grows past any pack.
 */
export function baseDistance(pack: Buffer, pos: number, end: number): { back: number; pos: number } | null {
  let c = pack[pos++]!;
  let back = c & 0x7f;
  while (c & 0x80) {
    if (pos >= end || back > 2 ** 40) return null;
    c = pack[pos++]!;
    back = (back + 1) * 128 + (c & 0x7f);
  }
  return { back, pos };
}

interface Entry {
  type: ObjectType | "ofs" | "ref";
  /** Inflated data: the object's, or a delta's. */
  data: Buffer;
  base?: number | string;
}

/**
 * The objects of `pack` by id (SHA-1); the bound it passes; or what is wrong when it is not a
 * well-formed pack. A delta's base is another object of the pack (no thin packs are asked for).
 */
export function readPack(pack: Buffer, limits = PACK_LIMITS): Map<string, GitObject> | PackBound | PackShape {
  try {
    return read(pack, limits);
  } catch {
    return bad("an entry whose data does not inflate"); // a zlib stream that is not one
  }
}

const bad = (what: string): PackShape => ({ shape: `a pack out of shape (${what})` });

const tooMany = (limits: typeof PACK_LIMITS): PackBound => ({ bound: `more than ${limits.objects} objects in one fetch` });
const tooLarge = (size: number, limits: typeof PACK_LIMITS): PackBound => ({ bound: `an object of ${size} bytes, past the bound of ${limits.objectBytes} on one object` });
const tooMuch = (limits: typeof PACK_LIMITS): PackBound => ({ bound: `objects of more than ${limits.totalBytes} bytes in all` });

function read(pack: Buffer, limits: typeof PACK_LIMITS): Map<string, GitObject> | PackBound | PackShape {
  if (pack.length < 32 || pack.toString("latin1", 0, 4) !== "PACK") return bad("no pack header");
  const version = pack.readUInt32BE(4);
  const count = pack.readUInt32BE(8);
  if (version !== 2 && version !== 3) return bad(`version ${version}`);
  if (count > limits.objects) return tooMany(limits);
  const end = pack.length - 20;
  if (createHash("sha1").update(pack.subarray(0, end)).digest("hex") !== pack.toString("hex", end)) return bad("its trailing checksum does not match");
  const entries: Entry[] = [];
  const byOffset = new Map<number, number>();
  let pos = 12;
  let total = 0;
  for (let i = 0; i < count; i++) {
    if (pos >= end) return bad(`${count} entries announced, ${i} there`);
    const offset = pos;
    const head = entryHeader(pack, pos, end);
    if (!head) return bad(`entry ${i}'s header`);
    const { code, size } = head;
    pos = head.pos;
    // Judged by the size the entry declares, before a byte of it is inflated.
    if (size > limits.objectBytes) return tooLarge(size, limits);
    let type: Entry["type"];
    let base: number | string | undefined;
    if (TYPES[code]) type = TYPES[code]!;
    else if (code === OFS_DELTA) {
      const d = pos < end ? baseDistance(pack, pos, end) : null;
      if (!d || d.back <= 0 || d.back > offset - 12) return bad(`entry ${i}'s delta base is not in the pack`);
      pos = d.pos;
      type = "ofs";
      base = offset - d.back;
    } else if (code === REF_DELTA) {
      if (pos + 20 > end) return bad(`entry ${i}'s header`);
      type = "ref";
      base = pack.toString("hex", pos, pos + 20);
      pos += 20;
    } else return bad(`entry ${i} of type ${code}`);
    if (pos >= end) return bad(`entry ${i}'s data`);
    const out = inflateSync(pack.subarray(pos, end), { info: true, maxOutputLength: Math.max(1, size) }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
    if (out.buffer.length !== size) return bad(`entry ${i} inflates to ${out.buffer.length} bytes, not the ${size} it declares`);
    pos += out.engine.bytesWritten;
    // Every byte inflated or made by a delta counts against the bound.
    total += size;
    if (total > limits.totalBytes) return tooMuch(limits);
    byOffset.set(offset, entries.length);
    entries.push({ type, data: out.buffer, ...(base !== undefined ? { base } : {}) });
  }
  if (pos !== end) return bad("bytes past its last entry");

  const objects = new Map<string, GitObject>();
  const resolved = new Map<number, GitObject>();
  const byId = new Map<string, number>();
  const keep = (k: number, o: GitObject) => {
    resolved.set(k, o);
    const id = objectId(o);
    byId.set(id, k);
    objects.set(id, o);
  };
  let past: PackBound | null = null;
  /** Entry `k`'s delta applied to `base` and kept; false for a delta out of shape or past the bounds (`past`). */
  const applied = (k: number, base: GitObject): boolean => {
    const size = deltaSize(entries[k]!.data);
    if (size > limits.objectBytes) return !(past = tooLarge(size, limits));
    // What deltas make counts too: small deltas copying a large base many times are a bomb.
    if (size > 0 && total + size > limits.totalBytes) return !(past = tooMuch(limits));
    const data = applyDelta(base.data, entries[k]!.data, limits.objectBytes);
    if (!data) return false;
    total += data.length;
    keep(k, { type: base.type, data });
    return true;
  };
  const baseOf = (e: Entry) => (typeof e.base === "number" ? byOffset.get(e.base) : byId.get(e.base as string));
  /**
   * A REF_DELTA's base that is itself a delta (rare; git writes OFS_DELTA when asked for
   * ofs-delta): each round resolves every delta whose base is now known; a chain of deltas by id
   * needs one round a link, and more than a few dozen is no pack git writes (a hostile one costs
   * no more).
   */
  const resolveLater = (id: string): number | undefined => {
    for (let round = 0; round < 64 && !byId.has(id); round++) {
      let progress = false;
      for (const k of entries.keys()) {
        if (resolved.has(k)) continue;
        const b = baseOf(entries[k]!);
        const base = b === undefined ? undefined : resolved.get(b);
        if (!base) continue;
        if (!applied(k, base)) return undefined;
        progress = true;
      }
      if (!progress) break;
    }
    return byId.get(id);
  };
  // Whole objects first (their ids are what REF_DELTA names), then deltas, each by its chain.
  for (const [k, e] of entries.entries()) if (e.type !== "ofs" && e.type !== "ref") keep(k, { type: e.type, data: e.data });
  for (const k of entries.keys()) {
    if (resolved.has(k)) continue;
    // Follow the chain down to a resolved base, then apply the deltas back up.
    const chain: number[] = [];
    let at: number | undefined = k;
    while (at !== undefined && !resolved.has(at)) {
      if (chain.length > limits.chain || chain.includes(at)) return bad(chain.includes(at) ? "a delta that is its own base" : `a chain of more than ${limits.chain} deltas`);
      chain.push(at);
      const e: Entry = entries[at]!;
      at = baseOf(e) ?? (typeof e.base === "string" ? resolveLater(e.base) : undefined);
      if (at === undefined) return past ?? bad("a delta whose base is not in the pack");
    }
    let base = resolved.get(at!)!;
    for (let j = chain.length - 1; j >= 0; j--) {
      if (!applied(chain[j]!, base)) return past ?? bad("a delta that does not apply to its base");
      base = resolved.get(chain[j]!)!;
    }
  }
  return objects;
}

function objectId(o: GitObject): string {
  return createHash("sha1").update(`${o.type} ${o.data.length}\0`, "latin1").update(o.data).digest("hex");
}

/** The size of what `delta` makes (its second varint), or -1 when it cannot be read. */
function deltaSize(delta: Buffer): number {
  return deltaHead(delta)?.size ?? -1;
}

/** A delta's two sizes, its base's and its result's (base-128, little end first), and where its instructions start; null when they cannot be read. */
function deltaHead(delta: Buffer): { from: number; size: number; pos: number } | null {
  let pos = 0;
  const sizes: number[] = [];
  for (let v = 0; v < 2; v++) {
    let n = 0;
    let c: number;
    let shift = 0;
    do {
      if (pos >= delta.length || shift > 35) return null;
      c = delta[pos++]!;
      n += (c & 0x7f) * 2 ** shift;
      shift += 7;
    } while (c & 0x80);
    sizes.push(n);
  }
  return { from: sizes[0]!, size: sizes[1]!, pos };
}

/** git's delta: its head (deltaHead), then copy and insert instructions. */
export function applyDelta(base: Buffer, delta: Buffer, max: number): Buffer | null {
  const head = deltaHead(delta);
  if (!head) return null;
  const { from, size } = head;
  let pos = head.pos;
  if (from !== base.length || size > max) return null;
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  while (pos < delta.length) {
    const op = delta[pos++]!;
    if (op & 0x80) {
      let off = 0;
      let len = 0;
      for (let b = 0; b < 4; b++) if (op & (1 << b)) off += delta[pos++]! * 2 ** (8 * b);
      for (let b = 0; b < 3; b++) if (op & (16 << b)) len += delta[pos++]! * 2 ** (8 * b);
      if (pos > delta.length) return null;
      if (len === 0) len = 0x10000;
      if (off + len > base.length || o + len > size) return null;
      base.copy(out, o, off, off + len);
      o += len;
    } else if (op > 0) {
      if (pos + op > delta.length || o + op > size) return null;
      delta.copy(out, o, pos, pos + op);
      pos += op;
      o += op;
    } else return null; // opcode 0 is reserved
  }
  return o === size ? out : null;
}
