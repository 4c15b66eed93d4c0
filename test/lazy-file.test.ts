// The lazy groups' code written into files beside the bundle, one a group (scripts/lazy-file.mjs): the groups
// get the bundle's top-level names as parameters, with the values they hold when the file is first
// read. What is checked, on a small bundle of the shape esbuild writes: the names passed are the
// ones the groups really read (a local of the same name is not one), the build refuses a group
// that reads a name the bundle assigns after its declaration (it would see a stale value), the
// groups run as they did inside the bundle, and a group asked for before the bundle's top has run
// throws instead of running with names not yet set.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Script } from "node:vm";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { besideFiles } from "../scripts/lazy-file.mjs";
import { CLI, cleanEnv, tempDir, tempRepo } from "./support/repo.ts";

// What Node passes a CommonJS module (the test itself runs as an ES module).
const require = createRequire(import.meta.url);
const HEAD = "(function (exports, require, module, __filename, __dirname) {\n";
const TAIL = "\n})\n";

/** A bundle's top (as esbuild writes it) and one group `g`, whose body returns `{ answer }`. */
function parts(top: string, group: string) {
  return { top: `${HEAD}"use strict";\n${top}\nmodule.exports.answer = () => __lazy_g().answer;\n`, groups: [{ kind: "g", body: `${group}\n  return { answer };\n` }], tail: TAIL };
}

/** Runs the bundle `main` with its group's file `side` beside it; what its top exported. */
function load(main: string, side: string): { answer: () => unknown } {
  const run = (text: string, mod: Record<string, unknown>) => {
    (new Script(text).runInThisContext() as (...a: unknown[]) => void)(mod.exports, require, mod, "bundle.cjs", ".");
    return mod.exports;
  };
  const beside = (name: string) => {
    assert.is(name, "bundle-lazy-g.cjs");
    return run(side, { exports: {} });
  };
  return run(main, { exports: {}, loadBeside: beside }) as { answer: () => unknown };
}

/** The bundle without its group, and the group's one file. */
async function split(p: ReturnType<typeof parts>): Promise<{ main: string; side: string; read: string[] }> {
  const { main, sides } = await besideFiles(p, (kind: string) => `bundle-lazy-${kind}.cjs`);
  assert.equal(sides.map((f) => f.file), ["bundle-lazy-g.cjs"]);
  return { main, side: sides[0]!.text, read: sides[0]!.read };
}

const TOP = "var count = 0, LIMIT = 3;\nfunction bump() {\n  count++;\n}\nfunction twice(x) {\n  return 2 * x;\n}\nbump();";

test("a group gets the names it reads, not its locals of the same name, and runs as it did", async () => {
  const group = "  function local(count) {\n    return twice(count) + LIMIT;\n  }\n  var answer = local(2);";
  const { main, side, read } = await split(parts(TOP, group));
  assert.equal(read, ["LIMIT", "twice"]);
  assert.not.match(main, /function local/);
  assert.match(side, /function local/);
  assert.is(load(main, side).answer(), 7);
});

test("the build refuses a group that reads a name the bundle assigns after its declaration", async () => {
  for (const write of ["count++;", "count = 2;", "[count] = [2];", "({ count } = { count: 2 });", "count ??= 2;"]) {
    const top = TOP.replace("count++;", write);
    await split(parts(top, "  var answer = count + LIMIT;")).then(
      () => assert.unreachable(`${write}: a group reading count was written beside the bundle`),
      (e: Error) => assert.match(e.message, /assigns after their declaration: count/, write),
    );
  }
});

test("a group asked for while the bundle's top runs throws rather than see names not yet set", async () => {
  const top = `${TOP}\nvar early = __lazy_g().answer;\nvar LATE = 5;`;
  const { main, side } = await split(parts(top, "  var answer = LIMIT + LATE;"));
  assert.throws(() => load(main, side), /asked for before the bundle's top had run/);
  const { main: fine, side: fineSide } = await split(parts(`${TOP}\nvar LATE = 5;`, "  var answer = LIMIT + LATE;"));
  assert.is(load(fine, fineSide).answer(), 8);
});

test("a group's file of another build (an install or build under a running command) is refused, not run with names in another order", async () => {
  const group = "  var answer = twice(LIMIT);";
  const { main } = await split(parts(TOP, group));
  const { side: other } = await split(parts(`var EXTRA = 100;\n${TOP}`, `${group} answer += EXTRA;`));
  assert.throws(() => load(main, other).answer(), /bundle-lazy-g\.cjs is of another build than bundle\.cjs/);
});

test("a bundle loaded by another loader (no loadBeside) reads its group's file itself", async () => {
  const { main, side } = await split(parts(TOP, "  var answer = twice(LIMIT);"));
  const dir = mkdtempSync(join(tmpdir(), "lazy-file-"));
  try {
    writeFileSync(join(dir, "bundle-lazy-g.cjs"), side);
    const mod = { exports: {} as { answer: () => unknown } };
    (new Script(main).runInThisContext() as (...a: unknown[]) => void)(mod.exports, require, mod, join(dir, "bundle.cjs"), dir);
    assert.is(mod.exports.answer(), 6);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a group's file missing from an install: one line naming it and exit 1, not a stack trace", () => {
  const dist = tempDir();
  cpSync(dirname(CLI), dist, { recursive: true });
  rmSync(join(dist, "hot-main-lazy-hotProgram.cjs"));
  const repo = tempRepo();
  // Neither is a plain line (fast-line.ts): commander's program reads them, whose code that file holds.
  for (const json of [false, true]) {
    const words = json ? ["--json", "task", "show", "t1"] : ["task", "show", "--", "t1"];
    const r = spawnSync(process.execPath, [join(dist, "git-handoff.cjs"), ...words], { cwd: repo, env: cleanEnv(), encoding: "utf8" });
    assert.is(r.status, 1, r.stderr);
    assert.match(r.stderr, /hot-main-lazy-hotProgram\.cjs is missing beside .*hot-main\.cjs: reinstall git-handoff/);
    assert.not.match(r.stderr, /\n\s+at /, "no stack trace");
    assert.is(r.stderr.trim().split("\n").length, 1, r.stderr);
    if (json) assert.match(JSON.parse(r.stdout).error.message, /is missing beside/);
  }
});

test.run();
