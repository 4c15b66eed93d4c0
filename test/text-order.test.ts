// textOrder sorts as localeCompare does: times of one ISO format, task ids, and strings chosen to
// differ at letters, case, punctuation and digits against letters (where it falls back to the collator).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { textOrder } from "../src/core/text-order.ts";

let seed = 7;
const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
const ALPHABET = "0123456789abcXYZ-_.:T ";
const word = () => Array.from({ length: 1 + rand(8) }, () => ALPHABET[rand(ALPHABET.length)]).join("");
const iso = () => new Date(Date.parse("2026-01-01T00:00:00.000Z") + rand(2 ** 30) * 1000 + rand(1000)).toISOString();

test("the sign of every comparison is localeCompare's", () => {
  const pairs: [string, string][] = [];
  for (let i = 0; i < 3000; i++) pairs.push([word(), word()], [iso(), iso()], [`t${rand(200)}`, `t${rand(200)}`]);
  pairs.push(["a1", "ab"], ["A1", "a1"], ["a-1", "a_1"], ["x9", "x10"], ["", "0"], ["2026-11-01T10:00:00Z", "2026-11-01T10:00:00.000Z"]);
  for (const [a, b] of pairs) assert.is(Math.sign(textOrder(a, b)), Math.sign(a.localeCompare(b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
});

test("times of one ISO format sort as a plain string sort does", () => {
  const times = Array.from({ length: 500 }, iso);
  assert.equal([...times].sort(textOrder), [...times].sort());
});

test.run();
