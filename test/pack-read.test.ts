// Packs read in process (src/git/pack-read.ts), as a fetch over HTTP receives them: what git's
// own pack-objects writes (whole objects, offset deltas, deltas by id) reads back to the very
// objects git has; a pack that is damaged or past the bounds is refused whole, never half-read.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { applyDelta, PACK_LIMITS, readPack } from "../src/git/pack-read.ts";
import { packOf } from "../src/git/pack-stream.ts";
import { cleanupTemp, gitOut, tempDir } from "./support/repo.ts";

test.after(() => cleanupTemp());

/** A repository of 40 similar blobs (git deltifies them) and git's packs of them, both delta kinds. */
function gitPacks(): { repo: string; ids: string[]; ofs: Buffer; ref: Buffer } {
  const repo = tempDir("handoff-pack-read-");
  gitOut(repo, "init", "-q", "--bare", ".");
  const ids: string[] = [];
  const base = Array.from({ length: 400 }, (_, i) => `line ${i} of a record that changes a little each time\n`).join("");
  for (let i = 0; i < 40; i++) {
    const text = base.replace(`line ${i * 7} `, `line ${i * 7} changed ${i} `) + `tail ${i}\n`;
    ids.push(spawnSync("git", ["hash-object", "-w", "--stdin"], { cwd: repo, input: text, encoding: "utf8" }).stdout.trim());
  }
  const pack = (args: string[]) => spawnSync("git", ["pack-objects", "--stdout", "--window=50", ...args], { cwd: repo, input: ids.join("\n") + "\n", maxBuffer: 1 << 26 }).stdout as Buffer;
  return { repo, ids, ofs: pack(["--delta-base-offset"]), ref: pack([]) };
}

test("git's packs, offset deltas and deltas by id, read back to git's objects", () => {
  const { repo, ids, ofs, ref } = gitPacks();
  for (const pack of [ofs, ref]) {
    const objects = readPack(pack) as Map<string, { type: string; data: Buffer }>;
    assert.ok(objects instanceof Map, "the pack reads");
    assert.is(objects!.size, ids.length);
    for (const id of ids) {
      const o = objects!.get(id);
      assert.ok(o, id);
      assert.is(o!.type, "blob");
      assert.is(o!.data.toString("utf8"), spawnSync("git", ["cat-file", "blob", id], { cwd: repo, encoding: "utf8" }).stdout);
    }
  }
  // Far smaller than the objects themselves: git deltified them (else this proves less than it says).
  const whole = packOf(ids.map((id) => ({ type: "blob" as const, data: spawnSync("git", ["cat-file", "blob", id], { cwd: repo }).stdout as Buffer })));
  assert.ok(ofs.length < whole.length / 4, `${ofs.length} vs ${whole.length}`);
  // Our own packs read back too.
  assert.is((readPack(whole) as Map<string, unknown>).size, ids.length);
});

test("a damaged, cut or oversized pack is refused whole", () => {
  const { ofs } = gitPacks();
  const flipped = Buffer.from(ofs);
  flipped[40] = flipped[40]! ^ 0xff;
  // Out of shape: refused naming what is wrong (the fetch is refused, not handed to git).
  assert.equal(readPack(flipped), { shape: "a pack out of shape (its trailing checksum does not match)" }, "checksum");
  assert.equal(readPack(ofs.subarray(0, ofs.length - 30)), { shape: "a pack out of shape (its trailing checksum does not match)" }, "cut");
  const miscounted = Buffer.concat([ofs.subarray(0, 8), Buffer.from([0, 0, 0, 41]), ofs.subarray(12, ofs.length - 20)]);
  assert.match((readPack(miscounted) as { shape: string }).shape, /^a pack out of shape \(/, "a count that does not match");
  assert.equal(readPack(Buffer.concat([miscounted, createHash("sha1").update(miscounted).digest()])), { shape: "a pack out of shape (41 entries announced, 40 there)" }, "a count that does not match, checksum made anew");
  assert.equal(readPack(Buffer.from("not a pack at all, not even close to one")), { shape: "a pack out of shape (no pack header)" });
  // Past a bound: refused as such (the fetch is refused, not handed to git), naming the bound.
  assert.equal(readPack(ofs, { ...PACK_LIMITS, objects: 10 }), { bound: "more than 10 objects in one fetch" }, "too many objects");
  assert.match((readPack(ofs, { ...PACK_LIMITS, objectBytes: 1000 }) as { bound: string }).bound, /^an object of \d+ bytes, past the bound of 1000 on one object$/);
  assert.equal(readPack(ofs, { ...PACK_LIMITS, totalBytes: 50_000 }), { bound: "objects of more than 50000 bytes in all" }, "all of them past the bound");
  // What deltas make counts too: the entries as sent fit in 100 KB, the objects they make do not.
  for (const pack of [ofs, gitPacks().ref]) assert.equal(readPack(pack, { ...PACK_LIMITS, totalBytes: 100_000 }), { bound: "objects of more than 100000 bytes in all" }, "a delta's result past the bound");
  // A pack of one blob whose header says it is bigger than what inflates: refused.
  const one = packOf([{ type: "blob", data: Buffer.from("hello") }]);
  const lying = Buffer.from(one);
  lying[12] = (3 << 4) | 6; // blob, size 6 (it holds 5)
  const body = lying.subarray(0, lying.length - 20);
  const fixed = Buffer.concat([body, createHash("sha1").update(body).digest()]);
  assert.match((readPack(fixed) as { shape: string }).shape, /^a pack out of shape \(entry 0 /, "a size that does not match its data");
});

test("a delta that reads past its base or writes past its size is refused", () => {
  const base = Buffer.from("0123456789");
  // base size 10, result size 4: copy 4 bytes from offset 2.
  assert.is(applyDelta(base, Buffer.from([10, 4, 0x80 | 0x01 | 0x10, 2, 4]), 1000)?.toString(), "2345");
  assert.is(applyDelta(base, Buffer.from([10, 4, 0x80 | 0x01 | 0x10, 8, 4]), 1000), null, "past the base");
  assert.is(applyDelta(base, Buffer.from([10, 2, 0x80 | 0x01 | 0x10, 0, 4]), 1000), null, "past the result");
  assert.is(applyDelta(base, Buffer.from([9, 4, 0x80 | 0x01 | 0x10, 2, 4]), 1000), null, "another base");
  assert.is(applyDelta(base, Buffer.from([10, 4, 0]), 1000), null, "the reserved opcode");
  assert.is(applyDelta(base, Buffer.from([10, 4, 3, 0x61, 0x62]), 1000), null, "an insert cut short");
  assert.is(applyDelta(base, Buffer.from([10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 1]), 1000), null, "a size past the bound");
});

test.run();
