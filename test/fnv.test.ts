// FNV-1a (32 bits) names cache files: the code cache's folder tag, the lease tree's buckets, the
// listing file of a view's task tips. A changed value would name other files (a listing read
// again, a lease in another bucket), so the values are pinned: the published test vectors, and
// the step-by-step unsigned form the loops replaced, over long and non-ASCII text.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { FNV_BASIS, fnv1a32, fnv1a32Pair } from "../src/core/fnv.ts";
import { mulberry32 } from "./support/rng.ts";

/** The definition, made unsigned at every step. */
function reference(text: string, basis: number): number {
  let h = basis >>> 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

test("the published FNV-1a 32-bit vectors", () => {
  assert.is(fnv1a32(""), 0x811c9dc5);
  assert.is(fnv1a32("a"), 0xe40c292c);
  assert.is(fnv1a32("foobar"), 0xbf9cf968);
});

test("fnv1a32 and fnv1a32Pair agree with the definition on random and long texts", () => {
  const r = mulberry32(20261204);
  const other = FNV_BASIS ^ 0x9e3779b9;
  for (let n = 0; n < 300; n++) {
    const len = n === 0 ? 700_000 : r.int(200);
    let text = "";
    for (let i = 0; i < len; i++) text += String.fromCharCode(r.chance(0.1) ? r.int(0x10000) : 32 + r.int(95));
    const a = reference(text, FNV_BASIS);
    const b = reference(text, other);
    assert.is(fnv1a32(text), a);
    assert.is(fnv1a32(text, other), b);
    assert.equal(fnv1a32Pair(text, FNV_BASIS, other), [a, b]);
    for (const h of [a, b]) assert.ok(h >= 0 && h <= 0xffffffff && Number.isInteger(h));
  }
});

test.run();
