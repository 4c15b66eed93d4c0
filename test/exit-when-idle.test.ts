// A one-shot command exits once its answer is out and nothing it started is pending
// (cli/exit-when-idle.ts): it must not cut short anything still under way (a timer, a write, a
// continuation queued behind the answer) nor lose the exit status a command set.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { bundled } from "./support/bundle.ts";
import { CLI, cleanEnv, cleanupTemp, cli, tempDir, tempRepo } from "./support/repo.ts";
import { storeLease, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

const ROOT = resolve(import.meta.dirname, "..");
const MODULE = join(ROOT, "src/cli/exit-when-idle.ts");

/**
 * Runs `body` (JavaScript, with `exitWhenIdle` and `writeFileSync` in scope) as its own process,
 * on exit-when-idle.ts bundled: a plain node start, as a command's, not tsx's (~0.5 CPU-s).
 */
function runScript(body: string): { status: number | null; ms: number } {
  const file = join(tempDir(), "script.mjs");
  writeFileSync(file, `import { exitWhenIdle } from ${JSON.stringify(bundled(MODULE))};\nimport { writeFileSync } from "node:fs";\n${body}\n`);
  const t = Date.now();
  const r = spawnSync(process.execPath, [file], { cwd: ROOT, env: cleanEnv(), encoding: "utf8" });
  assert.is(r.stderr, "");
  return { status: r.status, ms: Date.now() - t };
}

test("the process waits for a timer and a continuation still pending, and keeps the exit status", () => {
  const dir = tempDir();
  const timer = join(dir, "timer");
  const later = join(dir, "later");
  const r = runScript(`
process.exitCode = 3;
setTimeout(() => writeFileSync(${JSON.stringify(timer)}, "timer"), 150);
exitWhenIdle();
queueMicrotask(() => void Promise.resolve().then(() => writeFileSync(${JSON.stringify(later)}, "later")));
`);
  assert.is(r.status, 3);
  assert.is(readFileSync(timer, "utf8"), "timer");
  assert.is(readFileSync(later, "utf8"), "later");
  assert.ok(r.ms >= 150, `${r.ms} ms`);
});

test("called from a tick (which runs before the promise callbacks queued beside it), it still lets those run", () => {
  const later = join(tempDir(), "later");
  // From a timer's callback: its ticks run before its promise callbacks (a module's top level runs
  // as a promise job itself, where the order would not show).
  const r = runScript(`
process.exitCode = 4;
setTimeout(() => {
  process.nextTick(exitWhenIdle);
  Promise.resolve().then(() => Promise.resolve()).then(() => queueMicrotask(() => writeFileSync(${JSON.stringify(later)}, "later")));
}, 1);
`);
  assert.is(r.status, 4);
  assert.is(readFileSync(later, "utf8"), "later");
});

test("a command leaves no young-generation collection to V8's next turn: a cold task show runs none", async () => {
  const repo = tempRepo();
  const cache = tempDir("handoff-cache-");
  await storeTasks({ cwd: repo, agent: "a1" }, [{ id: "t1", objective: "work" }]);
  // --trace-gc for the run that writes the code cache too (the flags are part of a cache's key).
  const show = () => spawnSync(process.execPath, ["--trace-gc", CLI, "task", "show", "t1"], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "a1", XDG_CACHE_HOME: cache }), encoding: "utf8" });
  assert.is(show().status, 0);
  const r = show();
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /^t1 {2}todo/);
  // V8 asks for a collection as a task once the young generation is 80% full, which loading the
  // bundle reaches; the exit is taken before the loop turns to run it.
  assert.equal(r.stdout.split("\n").filter((l) => /Scavenge.*\btask\b/.test(l)), []);
});

test("with nothing pending it exits with the status set, and the work done before it stands", () => {
  const out = join(tempDir(), "done");
  const r = runScript(`writeFileSync(${JSON.stringify(out)}, "done");\nprocess.exitCode = 2;\nexitWhenIdle();`);
  assert.is(r.status, 2);
  assert.ok(existsSync(out));
});

test("a listing read late through a pipe is complete, and a check that refuses keeps its status", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "a1" }, Array.from({ length: 40 }, (_, i) => ({ id: `t${i}`, objective: `task ${i} ${"x".repeat(2000)}`, scope: [`src/f${i}.ts`] })));
  // Larger than a pipe's buffer, and nobody reads it for a while: all of it arrives, and the
  // command's status is the pipeline's.
  const out = join(tempDir(), "list.json");
  const r = spawnSync("sh", ["-c", `"${process.execPath}" "${CLI}" task list --json --limit 40 | (sleep 0.4; cat > "${out}"); exit "$(($? + 0))"`], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "a1" }), encoding: "utf8" });
  assert.is(r.status, 0, r.stderr);
  assert.is((JSON.parse(readFileSync(out, "utf8")) as unknown[]).length, 40);
  await storeLease({ cwd: repo, agent: "a1" }, ["src/f0.ts"], { exclusive: true });
  assert.is(cli(["check", "src/f0.ts", "--agent", "a2"], { cwd: repo, agent: "a2" }).code, 3, "an exclusively leased file's check answers deny, status 3");
});

test.run();
