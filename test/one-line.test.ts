// Listings cut a text's first line to fit; a cut between the two halves of an emoji showed U+FFFD.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { oneLine } from "../src/core/one-line.ts";
import { memoryLine } from "../src/present/render-memories.ts";

test("a cut never splits a character of two UTF-16 units, and marks itself", () => {
  const text = "😀".repeat(80);
  for (let max = 2; max <= 120; max++) {
    const out = oneLine(text, max);
    assert.ok(out.length <= max, `${max}: ${out.length}`);
    assert.not.match(out, /[\ud800-\udbff](?![\udc00-\udfff])/, `${max}: a lone high surrogate`);
    assert.ok(out.endsWith("…") === text.length > max, `${max}`);
    assert.ok(Buffer.from(out, "utf8").toString("utf8") === out, `${max}: not valid text`);
  }
  assert.is(oneLine("short\nsecond", 60), "short");
  assert.is(oneLine("a".repeat(61), 60), "a".repeat(59) + "…");
});

test("a memory's line in a listing ends in a whole emoji", () => {
  const m = { id: "m-1", text: "😀".repeat(200), tags: [], task: null, author: "a", updated_by: "a", created_at: "2026-01-01T00:00:00Z", updated_at: "2026-01-01T00:00:00Z" } as never;
  assert.not.match(memoryLine(m), /\ufffd|[\ud800-\udbff](?![\udc00-\udfff])/);
  assert.match(memoryLine(m), /😀…$/);
});

test.run();
