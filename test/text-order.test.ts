// textOrder sorts as localeCompare does: times of one ISO format, task ids, lease patterns, and
// strings chosen to differ at letters, case, punctuation and digits against letters, and with
// characters outside the plain set (where it asks the collator). In a locale with a collation of
// its own (Danish: "aa" after "z") it follows the locale.
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { localeFromEnvironment, textOrder } from "../src/core/text-order.ts";
import { bundled } from "./support/bundle.ts";

/** text-order.ts bundled for the child processes: a plain node start each, not tsx's (~0.5 CPU-s). */
const MODULE = () => JSON.stringify(bundled(resolve(import.meta.dirname, "../src/core/text-order.ts")));

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
  const script = `import { textOrder } from ${MODULE()}; console.log(JSON.stringify(["z", "aa", "ab", "Z"].sort(textOrder)) + " " + JSON.stringify(["z", "aa", "ab", "Z"].sort((a, b) => a.localeCompare(b))));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", env: { ...process.env, LANG: "da_DK.UTF-8", LC_ALL: "da_DK.UTF-8" } });
  assert.is(r.status, 0, r.stderr);
  const [ours, theirs] = r.stdout.trim().split(" ");
  assert.is(ours, theirs);
  assert.ok(JSON.parse(ours!).indexOf("aa") > JSON.parse(ours!).indexOf("z"), `Danish order: ${ours}`);
});

test("the locale read from the environment is what ICU resolves, wherever it answers", () => {
  // Each set of variables in a child process of its own: ICU reads the environment once.
  const envs: Record<string, string>[] = [
    {},
    { LANG: "C" },
    { LANG: "C.UTF-8" },
    { LANG: "C.utf8" },
    { LANG: "POSIX" },
    { LANG: "en_US.UTF-8" },
    { LANG: "en_GB.UTF-8" },
    { LANG: "en" },
    { LANG: "en_IN" },
    { LANG: "en_US@euro" },
    { LANG: "de_DE.UTF-8" },
    { LANG: "" },
    { LC_ALL: "", LANG: "en_US.UTF-8" },
    { LC_ALL: "C", LANG: "de_DE.UTF-8" },
    { LC_MESSAGES: "de_DE.UTF-8", LANG: "en_US.UTF-8" },
    { LC_MESSAGES: "en_GB.UTF-8", LANG: "da_DK.UTF-8" },
    { LC_COLLATE: "da_DK.UTF-8", LANG: "en_US.UTF-8" },
    { LANGUAGE: "de", LANG: "en_US.UTF-8" },
  ];
  const script = `import { icuSaysEnglish } from ${MODULE()}; console.log(icuSaysEnglish());`;
  let answered = 0;
  for (const vars of envs) {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, ...vars };
    const ours = localeFromEnvironment(env);
    if (ours === null) continue;
    answered++;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", env });
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stdout.trim(), String(ours), JSON.stringify(vars));
  }
  assert.ok(answered >= 10, `the environment answered for ${answered} sets`);
  for (const vars of [{ LANG: "de_DE.UTF-8" }, { LANG: "" }, { LANG: "en_US@euro" }, { LC_ALL: "", LANG: "en_US.UTF-8" }]) assert.is(localeFromEnvironment(vars), null, JSON.stringify(vars));
});

test.run();
