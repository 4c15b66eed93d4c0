// Runs several test files in one process, one after the other, each exactly as uvu's own CLI runs
// a file: import it (its test.run() queues its tests), then uvu's exec, which prints its tests and
// its own Total/Passed/Skipped lines. Between files it prints marker lines that test/run.ts reads
// to give each file its own result, output and time. What it saves is the fixed cost of a test
// process (node, importing src/ again): about 0.65 CPU-seconds a file under tsx, ~0.35 bundled.
//
//   node --import tsx test/support/uvu-files.ts test/a.test.ts test/b.test.ts ...
//   node DIR/test/support/uvu-files.mjs --bundles=DIR test/a.test.ts ...   (bundled: support/test-bundles.ts)
//
// Bundled, each file named is imported from its bundle in DIR, and still named (in the marks, in
// uvu's output) by its source path.
//
// A file is imported only when its turn comes, so its module-level set-up runs next to its tests,
// as it would alone. Files that change process.env or import another test file run alone (run.ts
// decides), since here they would share a process.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { MARK } from "./uvu-files-mark.ts";

const g = globalThis as unknown as { UVU_DEFER: number; UVU_INDEX: number; UVU_QUEUE: unknown[][] };
// What uvu's CLI does before a test file loads: defer running until exec, and colour on.
g.UVU_DEFER = 1;
process.env.FORCE_COLOR = "1";
const uvu = await import("uvu");

/**
 * CPU seconds this process and the processes it started and waited for have used so far (Linux's
 * /proc: a child's time counts once it has been reaped), or null where /proc is not there. A test
 * file's share of the suite's CPU is mostly the real processes it starts (CLI calls, servers, git),
 * which its wall time alone does not tell on a machine where the suite is CPU-bound.
 */
function cpuSeconds(): number | null {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // Fields after the command name (which may hold spaces): cutime and cstime are the 16th and
    // 17th of the line, in ticks of 1/100 s (USER_HZ, 100 on every Linux architecture Node runs on).
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const own = process.cpuUsage();
    return (own.user + own.system) / 1e6 + (Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return null;
  }
}

const args = process.argv.slice(2);
const bundles = args[0]?.startsWith("--bundles=") ? args.shift()!.slice("--bundles=".length) : null;

let failed = false;
for (const file of args) {
  const started = performance.now();
  const cpuAtStart = cpuSeconds();
  process.stdout.write(`${MARK} start ${file}\n`);
  g.UVU_QUEUE.length = 0;
  g.UVU_INDEX = 0;
  g.UVU_QUEUE.push([file]);
  let code = 0;
  try {
    await import(pathToFileURL(bundles ? join(bundles, file.replace(/\.ts$/, ".mjs")) : resolve(file)).href);
    process.exitCode = 0;
    await uvu.exec(false);
    code = Number(process.exitCode ?? 0);
  } catch (e) {
    process.stdout.write(`${(e as Error)?.stack ?? String(e)}\n`);
    code = 1;
  }
  process.exitCode = 0;
  failed ||= code !== 0;
  const cpu = cpuSeconds();
  const cpuUsed = cpu === null || cpuAtStart === null ? "" : ` ${(cpu - cpuAtStart).toFixed(2)}`;
  process.stdout.write(`${MARK} end ${file} ${code} ${((performance.now() - started) / 1000).toFixed(2)}${cpuUsed}\n`);
}
process.exitCode = failed ? 1 : 0;

/**
 * Every file has ended; a process a test started and never stopped (a worker left running by a
 * test that failed before its own clean-up) would keep this one alive until run.ts's bound. Five
 * seconds on, what is still running in this process group is stopped, and this process exits.
 * Only when this process leads its group (run.ts starts it detached): run from a shell script, the
 * group could hold the script. The timer is unref'd, so a process with nothing left exits at once.
 */
function leadsGroup(): boolean {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) === process.pid;
  } catch {
    return false;
  }
}
setTimeout(() => {
  process.stdout.write(`[files] processes still running 5 s after the last file ended: stopped\n`);
  if (leadsGroup()) {
    process.on("SIGTERM", () => {});
    try {
      process.kill(-process.pid, "SIGTERM");
    } catch {}
  }
  setTimeout(() => process.exit(), 1000).unref();
}, 5000).unref();
