// git config lines are read by hand (config-line.ts) where they were read with regular
// expressions: a cold process compiled each pattern it ran. The hand readers must read every line
// as the patterns did, or say "beyond this reader" (null) where they did: checked here against
// the patterns themselves, over every line built from the pieces that matter (blanks of every
// kind, line breaks other than "\n", quotes, backslashes, comment marks, names of every kind).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { headerOf, keyLineOf, needsUnquoting, withoutComment } from "../src/git/config-line.ts";

const HEADER = /^\[\s*([A-Za-z0-9-]+)\s*(?:"([^"\\]*)")?\s*\]\s*(?:[#;].*)?$/;
const KEY = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/;

const BLANKS = ["", " ", "\t", "  \t", "\r", "\u00a0", "\u2028", "\u3000", "\ufeff", "\u0085", "\u180e", "\u200b"];
const NAMES = ["core", "Core", "a-b", "9x", "x9", "-", "", "a.b", "a_b", "\u00e9t\u00e9", "K\u212a"];
const SUBS = [null, "", "origin", "a b", 'a"b', "a\\b", "\r", "\u00e9"];
const TAILS = ["", "#", "; c", "#c\rd", "x", "]", "#\u2029"];

test("every header the pattern reads, the hand reader reads alike; every other, neither does", () => {
  let n = 0;
  for (const b1 of BLANKS)
    for (const name of NAMES)
      for (const b2 of [" ", "", "\r"])
        for (const sub of SUBS)
          for (const b3 of ["", "\t"])
            for (const tail of TAILS) {
              const line = `[${b1}${name}${b2}${sub === null ? "" : `"${sub}"`}${b3}]${b1}${tail}`;
              const m = HEADER.exec(line);
              assert.equal(headerOf(line), m ? { name: m[1], subsection: m[2] ?? null } : null, JSON.stringify(line));
              n++;
            }
  for (const line of ["[", "[]", '["x"]', '[a "b"', "[a]]", "[a] [b]", '[a "b" "c"]', "[a\u2029]"]) {
    const m = HEADER.exec(line);
    assert.equal(headerOf(line), m ? { name: m[1], subsection: m[2] ?? null } : null, JSON.stringify(line));
  }
  assert.ok(n > 10_000);
});

const VALUES = ["", "true", "a b", "a #c", "a#c", "a ;c", "a\t# c ; d", '"q"', "a\\b", "x\ry", "\u2028y", "y\u2029", "a \u00a0#c", "#c", " ;c", "\u00e9 ;", "a =b"];

test("every key line the pattern reads, the hand reader reads alike, its value and comment too", () => {
  for (const b1 of BLANKS)
    for (const key of [...NAMES, "logAllRefUpdates", "k"])
      for (const eq of ["", "=", " =", "= ", "==", ".", " x"])
        for (const value of VALUES) {
          const line = `${key}${b1}${eq}${b1}${value}`;
          const m = KEY.exec(line);
          const hand = keyLineOf(line);
          assert.equal(hand, m ? { key: m[1], value: m[2] } : null, JSON.stringify(line));
          if (hand?.value === undefined) continue;
          const value2 = hand.value.replace(/\s+[#;].*$/, "").trim();
          assert.is(withoutComment(hand.value), value2, JSON.stringify(line));
          assert.is(needsUnquoting(value2), /["\\#;]/.test(value2), JSON.stringify(line));
        }
});

test.run();
