// tasks.cache (record-cache.ts) answers a few lookups by searching the file's bytes, and parses
// the whole file only past SEARCHED_LOOKUPS of them: both ways must give the same answers (the
// last line of a commit wins, a writer's line counts only while its objects are there, a torn line
// is no answer and is written away at the next flush, lines this process added are seen). A caller
// that expects a few lookups has the file's end searched first (a record just appended).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { RecordCache } from "../src/store/record-cache.ts";
import { cleanupTemp, tempDir } from "./support/repo.ts";

test.after(cleanupTemp);

const oid = (n: number) => n.toString(16).padStart(40, "0");

function fixture(present: Set<string>): { path: string; open: () => RecordCache } {
  const path = join(tempDir(), "tasks.cache");
  // 150 KB of other commits' lines between the first two and the rest: a search of the file's
  // end (a few lookups expected) does not reach them and reads the whole file.
  const filler = Array.from({ length: 2_000 }, (_, i) => `${oid(1000 + i)}\t{"f":${i}}`);
  const lines = [
    `${oid(1)}\t{"v":"old"}`,
    `${oid(2)}\t{"v":"two"}`,
    ...filler,
    `${oid(1)}\t{"v":"new"}`,
    `${oid(3)}\t!${oid(30)},${oid(31)},${oid(32)}\t{"v":"written"}`,
    `${oid(4)}\t{"v": "tor`,
    `${oid(5)}\t{"v":"é ünïcode"}`,
  ];
  writeFileSync(path, lines.join("\n") + "\n");
  return { path, open: () => new RecordCache(path, (oids) => oids.every((o) => present.has(o))) };
}

test("searched and parsed lookups give the same answers", () => {
  for (const mode of ["searched", "parsed after 40 lookups", "parsed at once (a listing expects many)", "the end first (a few expected)"]) {
    const present = new Set([oid(30), oid(31), oid(32)]);
    const { open } = fixture(present);
    const c = open();
    // 40 lookups of an absent commit first: the cache then parses the whole file.
    if (mode === "parsed after 40 lookups") for (let i = 0; i < 40; i++) assert.is(c.get(oid(99)), undefined);
    if (mode.startsWith("parsed at once")) c.expect(10_000);
    if (mode.startsWith("the end first")) c.expect(2);
    const parsed = () => (c as unknown as { lines: Map<string, string> | null }).lines instanceof Map;
    const readWhole = () => (c as unknown as { bytes: Buffer | null | undefined }).bytes !== undefined || parsed();
    assert.is(parsed(), mode === "parsed after 40 lookups", mode);
    assert.equal(c.get(oid(1)), { v: "new" }, "the last line of a commit wins");
    assert.is(parsed(), mode.startsWith("parsed"), `${mode}: parsed after the first lookup`);
    assert.is(readWhole(), !mode.startsWith("the end first"), `${mode}: the file read whole for a line at its end`);
    assert.equal(c.get(oid(3)), { v: "written" }, "a writer's line while its objects are there");
    assert.equal(c.get(oid(2)), { v: "two" }, "a line far from the end");
    assert.ok(readWhole(), `${mode}: read whole for a line the end does not hold`);
    assert.is(c.get(oid(4)), undefined, "a torn line is no answer");
    assert.equal(c.get(oid(5)), { v: "é ünïcode" });
    assert.is(c.get(oid(6)), undefined);
    present.delete(oid(31));
    assert.is(open().get(oid(3)), undefined, "a writer's line whose objects are gone is no answer");
  }
});

test("lines added while searching are seen, and a flush after a torn line writes the file anew", () => {
  const { path, open } = fixture(new Set());
  const c = open();
  assert.is(c.get(oid(4)), undefined);
  c.put(oid(7), { v: "seven" });
  c.note(oid(8), { v: "eight" }, [oid(80), oid(81), oid(82)]);
  assert.equal(c.get(oid(7)), { v: "seven" });
  c.flush();
  const text = readFileSync(path, "utf8");
  assert.not.match(text, /"tor/, "the torn line is gone");
  assert.match(text, new RegExp(`^${oid(7)}\t\\{"v":"seven"\\}$`, "m"));
  assert.match(text, new RegExp(`^${oid(8)}\t!`, "m"));
  assert.equal(open().get(oid(1)), { v: "new" }, "the rewrite kept the last line of each commit");
  assert.equal(open().get(oid(5)), { v: "é ünïcode" });
});

test.run();
