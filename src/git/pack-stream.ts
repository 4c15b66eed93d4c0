// A pack of a few objects, as a push sends it (gitformat-pack: "PACK", version 2, the count, each
// object's type and size then its zlib data, a SHA-1 of all of it). No deltas: a claim sends a
// commit, a tree or two and a record of a few hundred bytes, which deltas would not shrink enough
// to be worth computing. Small objects are framed in zlib's stored blocks (small-object-codec.ts,
// as loose objects are: no node:zlib load in a one-shot claim); larger ones are compressed (the build loads node:zlib and
// node:crypto on first use, scripts/build.mjs).
import { createHash } from "node:crypto";
import { deflateSync } from "node:zlib";
import type { GitObject } from "./object-reader.ts";
import { SMALL_OBJECT_MAX, sha1Hex, storedDeflate } from "./small-object-codec.ts";
import { MESSAGE_MAX } from "./small-object-wasm.ts";

const TYPE_CODE: Record<GitObject["type"], number> = { commit: 1, tree: 2, blob: 3, tag: 4 };

/** The pack of `objects` (SHA-1 repositories only: the caller checks the format). */
export function packOf(objects: Iterable<GitObject>): Buffer {
  const parts: Buffer[] = [];
  let count = 0;
  for (const o of objects) {
    parts.push(entryHeader(TYPE_CODE[o.type], o.data.length), o.data.length <= SMALL_OBJECT_MAX ? storedDeflate(o.data) : deflateSync(o.data, { level: 1 }));
    count++;
  }
  const head = Buffer.alloc(12);
  head.write("PACK", 0, "latin1");
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE(count, 8);
  const body = Buffer.concat([head, ...parts]);
  return Buffer.concat([body, Buffer.from(sha1Of(body), "hex")]);
}

/** An entry's header: type in bits 4-6 of the first byte, the size 4 bits there then 7 a byte, little end first. */
function entryHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let c = (type << 4) | (size & 15);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(c | 0x80);
    c = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(c);
  return Buffer.from(bytes);
}

function sha1Of(bytes: Buffer): string {
  // The small codec hashes what fits its WebAssembly buffer; a larger pack is node:crypto's.
  return bytes.length <= MESSAGE_MAX - 72 ? sha1Hex(bytes) : createHash("sha1").update(bytes).digest("hex");
}
