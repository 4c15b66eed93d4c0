// SHA-1 and Adler-32 for small loose objects (small-object-codec.ts) in WebAssembly. A one-shot
// command runs the JS versions in V8's interpreter, where every 32-bit intermediate outside the
// small-integer range becomes a heap number: hashing a claim's objects (about 8 KB) took ~1.9 ms
// and left ~360 KB of garbage, a third of what a cold claim allocates (a scavenge more, ~0.8 ms).
// WebAssembly runs compiled from its first call (this 760-byte module: ~0.3 ms to compile and
// instantiate). Where WebAssembly is not available (node --jitless) or the module fails, the JS
// versions answer instead. The module is written out instruction by instruction in
// small-object-wasm-source.ts; these are its bytes (a test checks they agree).

/** The longest message (padding included) the module hashes; SMALL_OBJECT_MAX plus a block fits. */
export const MESSAGE_MAX = 32 * 1024;
/** Where the module leaves the five words of a SHA-1 (after the message and the 80-word schedule). */
export const DIGEST = MESSAGE_MAX + 320;

export const MODULE_BASE64 =
  "AGFzbQEAAAABCgJgAX8AYAF/AX8DAwIAAQUDAQABBxsDBm1lbW9yeQIABHNoYTEAAAdhZGxlcjMyAAEKugUC0gQBDX9BgcaUugYhAUGJ17b+fiECQf6568V5IQNB9qjJgQEhBEHww8uefCEFQQAhDANAQQAhCwNAIAsgDCALaigCACINQYD+g3hxQQh3IA1B/4H8B3FBGHdyNgKAgAIgC0EEaiILQcAASQ0ACwNAIAsgCygC9P8BIAsoAuD/AXMgCygCyP8BcyALKALA/wFzQQF3NgKAgAIgC0EEaiILQcACSQ0ACyABIQYgAiEHIAMhCCAEIQkgBSEKQQAhCwNAIAZBBXcgByAIcSAHQX9zIAlxcmogCmpBmfOJ1AVqIAsoAoCAAmohDSAJIQogCCEJIAdBHnchCCAGIQcgDSEGIAtBBGoiC0HQAEkNAAsDQCAGQQV3IAcgCHMgCXNqIApqQaHX5/YGaiALKAKAgAJqIQ0gCSEKIAghCSAHQR53IQggBiEHIA0hBiALQQRqIgtBoAFJDQALA0AgBkEFdyAHIAhxIAcgCXFyIAggCXFyaiAKakHc+e74eGogCygCgIACaiENIAkhCiAIIQkgB0EedyEIIAYhByANIQYgC0EEaiILQfABSQ0ACwNAIAZBBXcgByAIcyAJc2ogCmpB1oOL03xqIAsoAoCAAmohDSAJIQogCCEJIAdBHnchCCAGIQcgDSEGIAtBBGoiC0HAAkkNAAsgASAGaiEBIAIgB2ohAiADIAhqIQMgBCAJaiEEIAUgCmohBSAMQcAAaiEMIABBAWsiAA0AC0HAggIgATYCAEHEggIgAjYCAEHIggIgAzYCAEHMggIgBDYCAEHQggIgBTYCAAtkAQR/QQEhAUEAIQJBACEDA0AgA0GwK2oiBCAAIAQgAEkbIQQDQCABIAMtAABqIgEgAmohAiADQQFqIgMgBEkNAAsgAUHx/wNwIQEgAkHx/wNwIQIgAyAASQ0ACyACQRB0IAFyCw==";

export interface WasmCodec {
  sha1Hex(bytes: Uint8Array): string;
  adler32(bytes: Uint8Array): number;
}

let codec: WasmCodec | null | undefined;

/** Whether the module has been made (or found unable to run) in this process. */
export function wasmReady(): boolean {
  return codec !== undefined;
}

/** The compiled module's functions (made on first use), or null where WebAssembly cannot run it. */
export function wasmCodec(): WasmCodec | null {
  if (codec !== undefined) return codec;
  codec = null;
  try {
    if (typeof WebAssembly !== "object") return null;
    const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(MODULE_BASE64, "base64")));
    const ex = instance.exports as { memory: WebAssembly.Memory; sha1: (blocks: number) => void; adler32: (length: number) => number };
    const mem = new Uint8Array(ex.memory.buffer);
    const words = new DataView(ex.memory.buffer);
    codec = {
      sha1Hex(bytes) {
        const n = bytes.length;
        const blocks = ((n + 8) >>> 6) + 1;
        const end = blocks * 64;
        mem.set(bytes, 0);
        mem.fill(0, n, end);
        mem[n] = 0x80;
        words.setUint32(end - 8, Math.floor(n / 0x20000000));
        words.setUint32(end - 4, (n * 8) >>> 0);
        ex.sha1(blocks);
        let hex = "";
        for (let i = 0; i < 5; i++) hex += words.getUint32(DIGEST + 4 * i, true).toString(16).padStart(8, "0");
        return hex;
      },
      adler32(bytes) {
        if (bytes.length === 0) return 1;
        mem.set(bytes, 0);
        return ex.adler32(bytes.length) >>> 0;
      },
    };
  } catch {
    codec = null;
  }
  return codec;
}
