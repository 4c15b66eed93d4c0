// Small objects are hashed and framed without node:crypto and node:zlib (small-object-codec.ts):
// the hash must be SHA-1's for every length (the padding boundaries above all), the stored zlib
// stream must be one git reads, and the reader must take only what it can check.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { deflateSync, inflateSync } from "node:zlib";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ObjectReader } from "../src/git/object-reader.ts";
import { ObjectWriter } from "../src/git/object-writer.ts";
import { adler32Js, inflateStored, sha1Hex, sha1HexJs, SMALL_OBJECT_MAX, storedDeflate } from "../src/git/small-object-codec.ts";
import { MESSAGE_MAX, MODULE_BASE64, wasmCodec } from "../src/git/small-object-wasm.ts";
import { moduleBytes } from "../src/git/small-object-wasm-source.ts";
import { formatMarkerOid, FORMAT_MARKER, MARKER_SHA1, MARKER_SHA256 } from "../src/store/codec.ts";
import { cliCoverage } from "./support/cli-coverage.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

let seed = 11;
const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => rand(256)));

test("SHA-1 of every length up to 300 bytes, around the block boundaries and of large inputs is node:crypto's", () => {
  const lengths = [...Array.from({ length: 300 }, (_, i) => i), 447, 448, 511, 512, 513, 4095, 4096, 65535, 65536, 200_001];
  for (const n of lengths) {
    const b = bytes(n);
    assert.is(sha1Hex(b), createHash("sha1").update(b).digest("hex"), `length ${n}`);
  }
  assert.is(sha1Hex(Buffer.from("abc")), "a9993e364706816aba3e25717850c26c9cd0d89d", "FIPS 180 example");
});

test("SHA-1 and Adler-32 in WebAssembly agree with node:crypto and the JS versions, up to the module's largest message", () => {
  const wasm = wasmCodec();
  assert.ok(wasm, "WebAssembly runs here (Node 20 without --jitless)");
  const lengths = [...Array.from({ length: 200 }, (_, i) => i), 4095, 4096, 5552, 5553, 11_105, SMALL_OBJECT_MAX, MESSAGE_MAX - 72];
  for (const n of lengths) {
    const b = bytes(n);
    const want = createHash("sha1").update(b).digest("hex");
    assert.is(wasm!.sha1Hex(b), want, `wasm, length ${n}`);
    assert.is(sha1HexJs(b), want, `js, length ${n}`);
    // Adler-32 as zlib computes it: node:zlib checks the trailer of every stored stream it inflates.
    assert.is(wasm!.adler32(b), adler32Js(b), `adler32, length ${n}`);
  }
  // Bytes of 0xff: the largest sums, where a reduction too late would overflow.
  const ff = Buffer.alloc(MESSAGE_MAX, 0xff);
  assert.is(wasm!.adler32(ff), adler32Js(ff));
  assert.ok(inflateSync(storedDeflate(ff.subarray(0, SMALL_OBJECT_MAX))).equals(ff.subarray(0, SMALL_OBJECT_MAX)));
  // Past the module's memory the JS versions answer.
  const big = bytes(MESSAGE_MAX + 10);
  assert.is(sha1Hex(big), createHash("sha1").update(big).digest("hex"));
});

test("the module's bytes are the ones its source writes", () => {
  assert.ok(Buffer.from(MODULE_BASE64, "base64").equals(Buffer.from(moduleBytes())), "small-object-wasm-source.ts changed: put its new bytes in small-object-wasm.ts");
});

test("stored zlib streams inflate with node:zlib, and read back here; anything else is left to node:zlib", () => {
  for (const n of [0, 1, 100, 65534, 65535, 65536, 140_000]) {
    const raw = bytes(n);
    const z = storedDeflate(raw);
    assert.ok(inflateSync(z).equals(raw), `node:zlib reads ${n} bytes`);
    assert.ok(inflateStored(z)?.equals(raw), `read back ${n} bytes`);
  }
  const raw = bytes(500);
  assert.is(inflateStored(deflateSync(raw)), null, "a compressed stream is node:zlib's");
  const bad = storedDeflate(raw);
  bad[bad.length - 1]! ^= 1;
  assert.is(inflateStored(bad), null, "a bad checksum");
  assert.is(inflateStored(storedDeflate(raw).subarray(0, 100)), null, "a truncated stream");
  assert.is(inflateStored(Buffer.from("not zlib at all")), null);
});

test("small objects written here are git's objects: same ids, stored blocks, fsck clean; large ones are compressed", async () => {
  const repo = tempRepo();
  const w = new ObjectWriter(`${repo}/.git`, "sha1");
  const small = w.write("blob", "a task record\n".repeat(20));
  const large = w.write("blob", bytes(SMALL_OBJECT_MAX + 100));
  const tree = w.write("tree", Buffer.concat([Buffer.from("100644 a\0", "latin1"), Buffer.from(small, "hex"), Buffer.from("100644 b\0", "latin1"), Buffer.from(large, "hex")]));
  assert.is(gitOut(repo, "cat-file", "-t", tree), "tree");
  assert.is(gitOut(repo, "rev-parse", `${tree}:a`), small);
  assert.is(gitOut(repo, "cat-file", "-p", small), ("a task record\n".repeat(20)).trimEnd());
  gitOut(repo, "fsck", "--strict", "--no-dangling");
  const file = (oid: string) => readFileSync(`${repo}/.git/objects/${oid.slice(0, 2)}/${oid.slice(2)}`);
  assert.ok(inflateStored(file(small)), "the small object is stored blocks");
  assert.is(inflateStored(file(large)), null, "the large one compressed");
  // Objects git wrote (compressed) read as before.
  writeFileSync(`${repo}/theirs.txt`, "written by git\n");
  const theirs = gitOut(repo, "hash-object", "-w", "theirs.txt");
  assert.is(inflateStored(file(theirs)), null, "git compresses its own");
  const r = new ObjectReader(`${repo}/.git`, repo);
  assert.is((await r.read(small))?.data.toString(), "a task record\n".repeat(20));
  assert.is((await r.read(theirs))?.data.toString(), "written by git\n");
  r.close();
});

test("a cold claim hashes the objects it writes in WebAssembly from the first, and git reads them", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "a task", "--id", "t1", "--scope", "src/a.ts"], { cwd: repo, agent: "me" }).code, 0);
  // V8's own call counts of the built bundle.
  const { status, stderr, calls } = cliCoverage(repo, ["claim", "t1"], "me");
  assert.is(status, 0, stderr);
  assert.ok(calls("sha1Hex") >= 6, `the claim hashed its objects (${calls("sha1Hex")})`);
  assert.is(calls("sha1HexJs"), 0, "no object hashed in JS");
  assert.is(calls("adler32Js"), 0, "no object framed in JS");
  gitOut(repo, "fsck", "--strict", "--no-dangling");
  assert.match(gitOut(repo, "cat-file", "-p", "refs/handoff/tasks/t1:task.json"), /"status": "claimed"/);
});

test("the format marker's ids are the hashes of FORMAT_MARKER", () => {
  const body = Buffer.from(FORMAT_MARKER, "utf8");
  const raw = Buffer.concat([Buffer.from(`blob ${body.length}\0`), body]);
  assert.is(MARKER_SHA1, createHash("sha1").update(raw).digest("hex"));
  assert.is(MARKER_SHA256, createHash("sha256").update(raw).digest("hex"));
  assert.is(formatMarkerOid(20), MARKER_SHA1);
  assert.is(formatMarkerOid(32), MARKER_SHA256);
});

test.run();
