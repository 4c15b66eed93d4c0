// textOrder sorts as localeCompare does: times of one ISO format, task ids, lease patterns, and
// strings chosen to differ at letters, case, punctuation and digits against letters, and with
// characters outside the plain set (where it asks the collator). In a locale with a collation of
// its own (Danish: "aa" after "z") it follows the locale.
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { textOrder } from "../src/core/text-order.ts";

let seed = 7;
const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
const PLAIN = "0123456789abcxyzABCXYZ _-:.@/+=";
const OTHER = "0a-A~#*!éß\t";
const word = (alphabet: string) => Array.from({ length: 1 + rand(8) }, () => alphabet[rand(alphabet.length)]).join("");
const iso = () => new Date(Date.parse("2026-01-01T00:00:00.000Z") + rand(2 ** 30) * 1000 + rand(1000)).toISOString();
const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);

test("the sign of every comparison is localeCompare's", () => {
  const pairs: [string, string][] = [];
  for (let i = 0; i < 4000; i++) pairs.push([word(PLAIN), word(PLAIN)], [word(OTHER), word(PLAIN)], [iso(), iso()], [`t${rand(200)}`, `t${rand(200)}`], [`src/${word(PLAIN)}`, `src/${word(PLAIN)}`]);
  pairs.push(["a1", "ab"], ["A1", "a1"], ["a", "A"], ["ab", "Ab"], ["aB", "Ab"], ["a-1", "a_1"], ["x9", "x10"], ["", "0"], ["src/**", "src/a.ts"], ["2026-11-01T10:00:00Z", "2026-11-01T10:00:00.000Z"]);
  for (const [a, b] of pairs) assert.is(sign(textOrder(a, b)), sign(a.localeCompare(b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
});

test("times of one ISO format sort as a plain string sort does", () => {
  const times = Array.from({ length: 500 }, iso);
  assert.equal([...times].sort(textOrder), [...times].sort());
});

test("in a locale with a collation of its own, the locale's order", () => {
  const script = `import { textOrder } from ${JSON.stringify(resolve(import.meta.dirname, "../src/core/text-order.ts"))}; console.log(JSON.stringify(["z", "aa", "ab", "Z"].sort(textOrder)) + " " + JSON.stringify(["z", "aa", "ab", "Z"].sort((a, b) => a.localeCompare(b))));`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8", env: { ...process.env, LANG: "da_DK.UTF-8", LC_ALL: "da_DK.UTF-8" } });
  assert.is(r.status, 0, r.stderr);
  const [ours, theirs] = r.stdout.trim().split(" ");
  assert.is(ours, theirs);
  assert.ok(JSON.parse(ours!).indexOf("aa") > JSON.parse(ours!).indexOf("z"), `Danish order: ${ours}`);
});

test.run();
