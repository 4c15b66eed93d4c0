// The modules a bundle reaches only across a lazy edge (a dynamic import of ours, zod and minimatch
// behind their stand-ins) are written inside a function of the bundle that runs on first use
// (scripts/cold-group.mjs): V8 then makes neither a SharedFunctionInfo nor a closure for their
// functions as a cold command loads, and the command's code cache holds none of them. What is
// checked: where the build put them, that a cold `task show` never runs any of the functions (V8's
// own call counts, NODE_V8_COVERAGE), that a claim sent to a sync remote runs the exchange's
// once and lands, and that a check against a glob lease sets minimatch up once and finds it; and
// that our own modules a cold command never runs (scripts/lazy-ours.mjs: the lease tree, the task
// order file, the pack reader, the write turns, the followed ref folders, the clock readings, the
// help's examples, the git runner, the object writer's temp files, the ready index, the repair
// advice, the hot bundle's commander program) are each in a function of their family that a cold
// `task show`, `check` and `claim` never run.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cliCoverage } from "./support/cli-coverage.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { servedProject } from "./support/servers.ts";

test.after(cleanupTemp);

const DIST = resolve(import.meta.dirname, "../dist");

/** Runs the CLI with V8's coverage on: its status, and how often each lazy group's function ran in hot-main.cjs (`groups`: every one, by name). */
function groupCalls(repo: string, args: string[]): { status: number | null; stdout: string; stderr: string; zod: number; imports: number; minimatch: number; groups: Record<string, number> } {
  const { status, stdout, stderr, names, calls } = cliCoverage(repo, args, "a2");
  const groups = Object.fromEntries(names.filter((name) => /^__lazy_\w+Run$/.test(name)).map((name) => [name, calls(name)]));
  return { status, stdout, stderr, zod: calls("__lazy_zodRun"), imports: calls("__lazy_importsRun"), minimatch: calls("__lazy_minimatchRun"), groups };
}

/** Each family of scripts/lazy-ours.mjs, and code of its modules no stand-in repeats (a function each module declares and does not export). */
const FAMILIES: [string, RegExp[]][] = [
  ["leaseTree", [/function escapedFolder\(/, /function diffFolder\(/]],
  ["taskOrder", [/function refCount\(/, /function bytesAt\(/]],
  ["packs", [/function idOf\(/, /function deltaHead\(/]],
  ["writeTurns", [/function processGone\(/]],
  ["refWatch", [/this\.auditStep\(\)/]],
  ["skew", [/function writeClockFile\(/]],
  ["examples", [/"git handoff init --dry-run"/]],
  ["gitProcesses", [/function passOn\(/, /function killGroup\(/]],
  ["tempFiles", [/this\.makeFanOuts\(\)/]],
  ["readyIndex", [/function sameOrder\(/, /function cutHead\(/]],
  ["repairHazard", [/function taskHazard\(/]],
  ["hotProgram", [/function registerTask\(/, /function buildFrom\(/, /function refuseOptionsAsValues\(/]],
];

/**
 * Where a group's code is, and its span there: the one-shot bundles' in a file beside them for each
 * group (scripts/lazy-file.mjs), the body of `__lazy_<kind>Body`; the other bundles' in their own
 * text, in `__lazy_<kind>Run` (up to the next group's declarations, or the module wrapper's end).
 */
const BESIDE = ["hot-main.cjs", "pre-edit-main.cjs"];

function group(bundle: string, kind: string): { file: string; text: string; at: number; end: number } {
  if (BESIDE.includes(bundle)) {
    const file = bundle.replace(/\.cjs$/, `-lazy-${kind}.cjs`);
    const text = readFileSync(join(DIST, file), "latin1");
    return { file, text, at: text.indexOf(`function __lazy_${kind}Body(`), end: text.length };
  }
  const text = readFileSync(join(DIST, bundle), "latin1");
  const at = text.indexOf(`function __lazy_${kind}Run(`);
  const next = text.indexOf("var __lazy_", at);
  return { file: bundle, text, at, end: next < 0 ? text.length : next };
}

/** Whether `mark` is inside the group's span. */
function inside(g: ReturnType<typeof group>, mark: string | RegExp): boolean {
  const where = typeof mark === "string" ? g.text.indexOf(mark) : g.text.search(mark);
  return where > g.at && where < g.end;
}

test("zod, minimatch, the exchange with a sync remote and the HTTP client are declared inside the bundles' lazy functions, not at their top", () => {
  // Every edge the plugins wrote was turned into a call of its function or a plain namespace.
  for (const f of readdirSync(DIST).filter((f) => f.endsWith(".cjs"))) assert.not.match(readFileSync(join(DIST, f), "latin1"), /__LAZY_/, f);
  for (const bundle of ["hot-main.cjs", "view-main.cjs", "pre-edit-main.cjs"]) {
    const zod = group(bundle, "zod");
    assert.ok(zod.at >= 0, `${bundle} has zod's lazy function`);
    // zod's object schema, and the loop that claims through a sync remote.
    assert.ok(inside(zod, "$ZodObject="), `${zod.file}: zod's classes inside its lazy function`);
    const minimatch = group(bundle, "minimatch");
    assert.ok(minimatch.at >= 0, `${bundle} has minimatch's lazy function`);
    // minimatch's matcher, and the brace expansion it imports.
    for (const fn of [/[ ,]Minimatch=class/, /function expand\(/]) assert.ok(inside(minimatch, fn), `${minimatch.file}: ${fn} inside minimatch's lazy function`);
    const imports = group(bundle, "imports");
    assert.ok(imports.at >= 0, `${bundle} has the lazy function of its dynamic imports`);
    assert.ok(inside(imports, "function remoteCasLoop("), `${imports.file}: remote-cas.ts inside it`);
    // The HTTP client: skew.ts, which every store opens, imports it only where it reads a server's clock.
    assert.ok(inside(imports, "function serverDate("), `${imports.file}: http-remote.ts inside it`);
  }
  // Those bundles hold none of the groups' code, only the calls that read their files.
  for (const bundle of BESIDE) {
    const text = readFileSync(join(DIST, bundle), "latin1");
    for (const mark of ["$ZodObject=", "function expand(", "function remoteCasLoop("]) assert.not.ok(text.includes(mark), `${bundle} holds ${mark}`);
  }
});

test("the modules of lazy-ours.mjs's families are declared inside their family's function in hot-main.cjs, not at its top", () => {
  for (const [family, marks] of FAMILIES) {
    const g = group("hot-main.cjs", family);
    assert.ok(g.at >= 0, `hot-main.cjs has ${family}'s lazy function`);
    for (const mark of marks) assert.ok(inside(g, mark), `${mark} inside __lazy_${family}'s function`);
  }
});

test("a cold task show, check and claim run none of the lazy functions of lazy-ours.mjs's families", () => {
  const repo = tempRepo();
  for (let i = 0; i < 3; i++) assert.is(cli(["task", "add", `task ${i}`, "--id", `t${i}`, "--scope", `src/f${i}.ts`], { cwd: repo }).code, 0);
  assert.is(cli(["claim", "t0"], { cwd: repo, agent: "holder" }).code, 0);
  for (const args of [["task", "show", "t1"], ["check", "src/f0.ts"], ["claim", "t2"]]) {
    const run = groupCalls(repo, args);
    assert.is(run.status, 0, run.stderr);
    for (const [family] of FAMILIES) assert.is(run.groups[`__lazy_${family}Run`], 0, `${args.join(" ")} ran ${family}'s function`);
  }
  assert.match(groupCalls(repo, ["check", "src/f0.ts"]).stdout, /src\/f0\.ts is leased by holder/);
});

test("a cold task show runs no lazy function; a claim sent to the sync remote runs the exchange's once and lands", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "one", "--id", "t1", "--scope", "src/a.ts"], { cwd: repo }).code, 0);
  const show = groupCalls(repo, ["task", "show", "t1"]);
  assert.is(show.status, 0, show.stderr);
  assert.equal([show.zod, show.imports, show.minimatch], [0, 0, 0]);

  const { bare, a } = servedProject();
  const before = gitOut(bare, "rev-parse", "refs/handoff/tasks/ship");
  const claim = groupCalls(a, ["claim", "ship", "--push"]);
  assert.is(claim.status, 0, claim.stderr);
  assert.is(claim.imports, 1);
  assert.is.not(gitOut(bare, "rev-parse", "refs/handoff/tasks/ship"), before, "the claim is on the remote");
});

test("a check of a path sets minimatch up only against a glob no shortcut answers, and then finds the lease", () => {
  const repo = tempRepo();
  assert.is(cli(["lease", "src/a.ts"], { cwd: repo, agent: "other" }).code, 0);
  const plain = groupCalls(repo, ["check", "src/a.ts"]);
  assert.is(plain.status, 0, plain.stderr);
  assert.match(plain.stdout, /src\/a\.ts is leased by other/);
  assert.is(plain.minimatch, 0);
  assert.is(cli(["lease", "lib/*.{ts,js}"], { cwd: repo, agent: "other" }).code, 0);
  const glob = groupCalls(repo, ["check", "lib/b.js"]);
  assert.is(glob.status, 0, glob.stderr);
  assert.match(glob.stdout, /lib\/b\.js is inside lib\/\*\.\{ts,js\}, leased by other/);
  assert.is(glob.minimatch, 1);
});

test.run();
