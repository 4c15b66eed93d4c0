// Hashing and zlib framing of small loose objects without node:crypto or node:zlib. A cold
// one-shot write (`claim`: six objects of a few hundred bytes) spent about 9 ms of its ~30 ms of
// own work loading those two modules, more than hashing and compressing took. So objects up to
// SMALL_OBJECT_MAX bytes are hashed here (SHA-1, FIPS 180-4) and stored in zlib's "stored" blocks
// (RFC 1950/1951: a valid zlib stream, what git itself writes with core.looseCompression=0; every
// git reads it, and `git gc` compresses it when it packs). A loose object takes a 4 KB block of
// disk whether compressed or not, so nothing is lost at these sizes. Larger objects, and SHA-256
// repositories, use node:crypto and node:zlib as before (object-writer.ts). The hashing itself
// (SHA-1, and zlib's Adler-32) runs in WebAssembly where it can (small-object-wasm.ts), in JS here
// where it cannot.

import { MESSAGE_MAX, wasmCodec, wasmReady, type WasmCodec } from "./small-object-wasm.ts";

/** The largest object (header included) hashed and framed here. */
export const SMALL_OBJECT_MAX = 16 * 1024;

const W = new Int32Array(80);

/**
 * From how many bytes a hash is worth making the WebAssembly module for (~0.45 ms, once): below
 * that the JS versions cost less in a process that hashes only that (an event index's agent key, a
 * task record alone). Once it is made, every hash that fits goes through it.
 */
const WASM_FROM = 1024;

/**
 * Small inputs hashed in JS before the module is made anyway: a process that hashes many small
 * objects (a first listing checks each packed record's id, 3,000 objects for 1,000 tasks) spent
 * ~14 ms in JS SHA-1 where the module costs ~1.3 ms once.
 */
const SMALL_BEFORE_WASM = 64;
let smallHashes = 0;

/**
 * The module's functions for an input of `length` bytes that fits, where they pay; else null.
 * `more`: the caller knows more hashes follow (sha1Hex).
 */
function wasmFor(length: number, fits: number, more = false): WasmCodec | null {
  return length <= fits && (more || length >= WASM_FROM || wasmReady() || ++smallHashes > SMALL_BEFORE_WASM) ? wasmCodec() : null;
}

/**
 * The SHA-1 of `bytes` in hex: WebAssembly where it runs (small-object-wasm.ts), else JS.
 * `more`: more hashes follow in this process, so the module pays from this one: an object
 * writer's (a record is a blob, a tree and a commit; a cold claim writes two records, ~2.5 KB
 * to hash, and hashed its first ~1.2 KB in the interpreter, ~0.6 ms, before the lease set's blob
 * made the module anyway).
 */
export function sha1Hex(bytes: Uint8Array, more = false): string {
  const wasm = wasmFor(bytes.length, MESSAGE_MAX - 72, more);
  return wasm ? wasm.sha1Hex(bytes) : sha1HexJs(bytes);
}

/** The SHA-1 of `bytes` in hex, in JS. */
export function sha1HexJs(bytes: Uint8Array): string {
  const n = bytes.length;
  // Message, 0x80, zero padding, 64-bit big-endian bit length: a whole number of 64-byte blocks.
  const blocks = ((n + 8) >>> 6) + 1;
  const m = new Int32Array(blocks * 16);
  for (let i = 0; i < n; i++) m[i >> 2]! |= bytes[i]! << (24 - (i & 3) * 8);
  m[n >> 2]! |= 0x80 << (24 - (n & 3) * 8);
  m[blocks * 16 - 1] = n * 8;
  m[blocks * 16 - 2] = Math.floor(n / 0x20000000);
  let h0 = 0x67452301;
  let h1 = 0xefcdab89 | 0;
  let h2 = 0x98badcfe | 0;
  let h3 = 0x10325476;
  let h4 = 0xc3d2e1f0 | 0;
  for (let b = 0; b < m.length; b += 16) {
    for (let t = 0; t < 16; t++) W[t] = m[b + t]!;
    for (let t = 16; t < 80; t++) {
      const v = W[t - 3]! ^ W[t - 8]! ^ W[t - 14]! ^ W[t - 16]!;
      W[t] = (v << 1) | (v >>> 31);
    }
    let a = h0;
    let c1 = h1;
    let c2 = h2;
    let d = h3;
    let e = h4;
    for (let t = 0; t < 80; t++) {
      let f: number;
      let k: number;
      if (t < 20) (f = (c1 & c2) | (~c1 & d)), (k = 0x5a827999);
      else if (t < 40) (f = c1 ^ c2 ^ d), (k = 0x6ed9eba1);
      else if (t < 60) (f = (c1 & c2) | (c1 & d) | (c2 & d)), (k = 0x8f1bbcdc | 0);
      else (f = c1 ^ c2 ^ d), (k = 0xca62c1d6 | 0);
      const next = (((a << 5) | (a >>> 27)) + f + e + k + W[t]!) | 0;
      e = d;
      d = c2;
      c2 = (c1 << 30) | (c1 >>> 2);
      c1 = a;
      a = next;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + c1) | 0;
    h2 = (h2 + c2) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
  }
  return hex8(h0) + hex8(h1) + hex8(h2) + hex8(h3) + hex8(h4);
}

function hex8(h: number): string {
  return (h >>> 0).toString(16).padStart(8, "0");
}

function adler32(bytes: Uint8Array): number {
  const wasm = wasmFor(bytes.length, MESSAGE_MAX);
  return wasm ? wasm.adler32(bytes) : adler32Js(bytes);
}

export function adler32Js(bytes: Uint8Array): number {
  let a = 1;
  let b = 0;
  // 5552 bytes at most between reductions keep the sums below 2^32 (zlib's NMAX).
  for (let i = 0; i < bytes.length; ) {
    const end = Math.min(i + 5552, bytes.length);
    for (; i < end; i++) {
      a += bytes[i]!;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** `raw` as a zlib stream of stored (uncompressed) blocks. */
export function storedDeflate(raw: Uint8Array): Buffer {
  const blocks = Math.max(1, Math.ceil(raw.length / 65535));
  const out = Buffer.allocUnsafe(2 + raw.length + blocks * 5 + 4);
  // CMF 0x78 (deflate, 32 KB window), FLG 0x01: no dictionary, fastest level, (CMF*256+FLG) % 31 == 0.
  out[0] = 0x78;
  out[1] = 0x01;
  let o = 2;
  for (let i = 0, k = 0; k < blocks; k++) {
    const len = Math.min(65535, raw.length - i);
    out[o++] = k === blocks - 1 ? 1 : 0; // BFINAL on the last block, BTYPE 00 (stored)
    out.writeUInt16LE(len, o);
    out.writeUInt16LE(~len & 0xffff, o + 2);
    o += 4;
    out.set(raw.subarray(i, i + len), o);
    o += len;
    i += len;
  }
  out.writeUInt32BE(adler32(raw), o);
  return out;
}

/**
 * The data of a zlib stream made only of stored blocks (as storedDeflate writes them), or null for
 * any other stream (compressed blocks, a preset dictionary, a bad checksum): those go to node:zlib,
 * which inflates them or says what is wrong.
 */
export function inflateStored(data: Uint8Array): Buffer | null {
  if (data.length < 11 || (data[0]! & 0x0f) !== 8 || (data[1]! & 0x20) !== 0 || ((data[0]! << 8) | data[1]!) % 31 !== 0) return null;
  const parts: Uint8Array[] = [];
  let total = 0;
  let o = 2;
  for (;;) {
    if (o + 5 > data.length) return null;
    const head = data[o]!;
    // Stored blocks only; the three header bits are followed by padding to the byte boundary.
    if ((head & 0x06) !== 0) return null;
    const len = data[o + 1]! | (data[o + 2]! << 8);
    const nlen = data[o + 3]! | (data[o + 4]! << 8);
    if ((len ^ 0xffff) !== nlen || o + 5 + len > data.length) return null;
    parts.push(data.subarray(o + 5, o + 5 + len));
    total += len;
    o += 5 + len;
    if (head & 1) break;
  }
  if (o + 4 !== data.length) return null;
  const out = Buffer.concat(parts, total);
  const sum = ((data[o]! << 24) | (data[o + 1]! << 16) | (data[o + 2]! << 8) | data[o + 3]!) >>> 0;
  return sum === adler32(out) ? out : null;
}
