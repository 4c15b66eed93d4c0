// The WebAssembly module of small-object-wasm.ts, instruction by instruction: SHA-1's compression
// function and Adler-32 over a message in the module's memory. Not loaded at run time: the module
// ships as the bytes this writes (MODULE_BASE64 there; building them here cost a cold command
// 1.1 ms, more than the hashing it saves), and a test checks the two agree. After a change here,
// put the new bytes there: node --import tsx -e 'import("./src/git/small-object-wasm-source.ts").then((m) => console.log(Buffer.from(m.moduleBytes()).toString("base64")))'
//
// Memory (one 64 KiB page): the message at 0 (at most MESSAGE_MAX bytes, padded by the caller),
// the 80-word schedule at SCHEDULE, the five hash words at DIGEST.
import { DIGEST, MESSAGE_MAX } from "./small-object-wasm.ts";

const SCHEDULE = MESSAGE_MAX;

// The few opcodes used (WebAssembly core specification, binary format).
const OP = {
  loop: 0x03,
  end: 0x0b,
  br_if: 0x0d,
  select: 0x1b,
  local_get: 0x20,
  local_set: 0x21,
  local_tee: 0x22,
  i32_load: 0x28,
  i32_load8_u: 0x2d,
  i32_store: 0x36,
  i32_const: 0x41,
  i32_lt_u: 0x49,
  i32_add: 0x6a,
  i32_sub: 0x6b,
  i32_rem_u: 0x70,
  i32_and: 0x71,
  i32_or: 0x72,
  i32_xor: 0x73,
  i32_shl: 0x74,
  i32_shr_u: 0x76,
  i32_rotl: 0x77,
} as const;
const VOID = 0x40;
const I32 = 0x7f;

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return out.concat(b);
    out.push(b | 0x80);
  }
}

/** A function body's instructions, written as calls. */
class Code {
  readonly bytes: number[] = [];
  private op(...b: number[]): this {
    this.bytes.push(...b);
    return this;
  }
  get(l: number) {
    return this.op(OP.local_get, ...uleb(l));
  }
  set(l: number) {
    return this.op(OP.local_set, ...uleb(l));
  }
  tee(l: number) {
    return this.op(OP.local_tee, ...uleb(l));
  }
  const(n: number) {
    return this.op(OP.i32_const, ...sleb(n | 0));
  }
  /** i32.load at the address on the stack plus `offset` (4-byte aligned). */
  load(offset = 0) {
    return this.op(OP.i32_load, 2, ...uleb(offset));
  }
  load8(offset = 0) {
    return this.op(OP.i32_load8_u, 0, ...uleb(offset));
  }
  store(offset = 0) {
    return this.op(OP.i32_store, 2, ...uleb(offset));
  }
  add() {
    return this.op(OP.i32_add);
  }
  sub() {
    return this.op(OP.i32_sub);
  }
  and() {
    return this.op(OP.i32_and);
  }
  or() {
    return this.op(OP.i32_or);
  }
  xor() {
    return this.op(OP.i32_xor);
  }
  shl() {
    return this.op(OP.i32_shl);
  }
  shrU() {
    return this.op(OP.i32_shr_u);
  }
  rotl() {
    return this.op(OP.i32_rotl);
  }
  remU() {
    return this.op(OP.i32_rem_u);
  }
  ltU() {
    return this.op(OP.i32_lt_u);
  }
  /** The first of two values when the condition on top is not zero, else the second. */
  select() {
    return this.op(OP.select);
  }
  /** A loop whose body `body` ends by branching back while the value it leaves is not zero. */
  loop(body: (c: this) => void) {
    this.op(OP.loop, VOID);
    body(this);
    return this.op(OP.br_if, 0, OP.end);
  }
}

/**
 * sha1(blocks): the SHA-1 compression of `blocks` 64-byte blocks at address 0 (the padded
 * message), the five words left at DIGEST.
 */
function sha1Body(): { locals: number; code: number[] } {
  // Locals: 0 blocks (param), 1-5 h0..h4, 6-10 a..e, 11 t (byte offset into the schedule), 12 off, 13 v.
  const [H, A, T, OFF, V] = [1, 6, 11, 12, 13];
  const [a, b, c, d, e] = [A, A + 1, A + 2, A + 3, A + 4];
  const c0 = new Code();
  [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0].forEach((h, i) => c0.const(h).set(H + i));
  c0.const(0).set(OFF);
  c0.loop((k) => {
    // The schedule: 16 big-endian words of the block, then w[t] = rotl1(w[t-3] ^ w[t-8] ^ w[t-14] ^ w[t-16]).
    k.const(0).set(T);
    k.loop((l) => {
      // bswap(x) = rotl(x & 0xff00ff00, 8) | rotl(x & 0x00ff00ff, 24)
      l.get(T).get(OFF).get(T).add().load().tee(V).const(0xff00ff00).and().const(8).rotl();
      l.get(V).const(0x00ff00ff).and().const(24).rotl().or().store(SCHEDULE);
      l.get(T).const(4).add().tee(T).const(64).ltU();
    });
    k.loop((l) => {
      l.get(T);
      l.get(T).load(SCHEDULE - 12).get(T).load(SCHEDULE - 32).xor().get(T).load(SCHEDULE - 56).xor().get(T).load(SCHEDULE - 64).xor();
      l.const(1).rotl().store(SCHEDULE);
      l.get(T).const(4).add().tee(T).const(320).ltU();
    });
    for (let i = 0; i < 5; i++) k.get(H + i).set(A + i);
    k.const(0).set(T);
    // Four rounds of twenty steps: f(b, c, d) and the constant of each.
    const rounds: [(x: Code) => void, number][] = [
      [(x) => x.get(b).get(c).and().get(b).const(-1).xor().get(d).and().or(), 0x5a827999],
      [(x) => x.get(b).get(c).xor().get(d).xor(), 0x6ed9eba1],
      [(x) => x.get(b).get(c).and().get(b).get(d).and().or().get(c).get(d).and().or(), 0x8f1bbcdc],
      [(x) => x.get(b).get(c).xor().get(d).xor(), 0xca62c1d6],
    ];
    rounds.forEach(([f, kk], r) => {
      k.loop((l) => {
        // v = rotl(a, 5) + f + e + k + w[t]; e = d; d = c; c = rotl(b, 30); b = a; a = v
        l.get(a).const(5).rotl();
        f(l);
        l.add().get(e).add().const(kk).add().get(T).load(SCHEDULE).add().set(V);
        l.get(d).set(e).get(c).set(d).get(b).const(30).rotl().set(c).get(a).set(b).get(V).set(a);
        l.get(T).const(4).add().tee(T).const(80 * (r + 1)).ltU();
      });
    });
    for (let i = 0; i < 5; i++) k.get(H + i).get(A + i).add().set(H + i);
    k.get(OFF).const(64).add().set(OFF);
    k.get(0).const(1).sub().tee(0);
  });
  for (let i = 0; i < 5; i++) c0.const(DIGEST + 4 * i).get(H + i).store();
  return { locals: 13, code: c0.bytes };
}

/** adler32(length): the Adler-32 of `length` bytes at address 0 (length > 0). */
function adlerBody(): { locals: number; code: number[] } {
  // Locals: 0 length (param), 1 a, 2 b, 3 i, 4 end of the chunk.
  const c = new Code();
  c.const(1).set(1).const(0).set(2).const(0).set(3);
  c.loop((k) => {
    // At most 5552 bytes between reductions keep both sums below 2^32 (zlib's NMAX).
    // end = i + 5552 < length ? i + 5552 : length
    k.get(3).const(5552).add().tee(4).get(0).get(4).get(0).ltU().select().set(4);
    k.loop((l) => {
      l.get(1).get(3).load8().add().tee(1).get(2).add().set(2);
      l.get(3).const(1).add().tee(3).get(4).ltU();
    });
    k.get(1).const(65521).remU().set(1).get(2).const(65521).remU().set(2);
    k.get(3).get(0).ltU();
  });
  c.get(2).const(16).shl().get(1).or();
  return { locals: 4, code: c.bytes };
}

function section(id: number, body: number[]): number[] {
  return [id, ...uleb(body.length), ...body];
}

function vec(items: number[][]): number[] {
  return [...uleb(items.length), ...items.flat()];
}

function name(s: string): number[] {
  return [...uleb(s.length), ...Buffer.from(s, "latin1")];
}

function func(f: { locals: number; code: number[] }): number[] {
  const body = [...vec([[...uleb(f.locals), I32]]), ...f.code, OP.end];
  return [...uleb(body.length), ...body];
}

/** The module's bytes: exports `memory`, `sha1(blocks)` and `adler32(length) -> i32`. */
export function moduleBytes(): Uint8Array {
  const types = vec([
    [0x60, ...vec([[I32]]), ...vec([])], // (i32) -> ()
    [0x60, ...vec([[I32]]), ...vec([[I32]])], // (i32) -> i32
  ]);
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, types),
    ...section(3, vec([[0], [1]])),
    ...section(5, vec([[0x00, 1]])), // one page, no maximum
    ...section(7, vec([[...name("memory"), 0x02, 0], [...name("sha1"), 0x00, 0], [...name("adler32"), 0x00, 1]])),
    ...section(10, vec([func(sha1Body()), func(adlerBody())])),
  ]);
}
