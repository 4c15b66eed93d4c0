// The suite's runner: the test files in uvu processes, several at once, so one slow file (a real
// remote, a real agent client) does not hold up the rest; the short files share a process, a few
// in turn (test/support/uvu-files.ts), the others have one each. Prints each file's result as it
// finishes, then the slowest files against the per-file budget, the files that used most CPU with
// the processes they started (Linux), and uvu's own totals (what CI reads).
//
//   node --import tsx test/run.ts [pattern ...]   (a pattern is a substring of a file name)
//   HANDOFF_TEST_JOBS=N   how many processes at once (default: cores + 1; test files mostly wait on git)
//   HANDOFF_TEST_EXTRA_JOBS=N   up to N more beside files that mostly wait (default 2; by test/cpu-rates.json)
//   HANDOFF_TEST_PLAN=1   print which files would share a process, in order, and run nothing
//   HANDOFF_TEST_TMPDIR=DIR   where the tests' temp folders go (default: a folder of the runner's
//                             on /dev/shm when it is a memory file system with room, else $TMPDIR)
//   HANDOFF_TEST_TSX=1    run the test files' sources under tsx, not their bundles (support/test-bundles.ts)
import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { MARK } from "./support/uvu-files-mark.ts";
import { removeDeadRuns } from "./support/dead-runs.ts";
import { bundleTests, type TestBundles } from "./support/test-bundles.ts";

const root = resolve(import.meta.dirname, "..");
const filesRunner = join(root, "test/support/uvu-files.ts");
/** Per-file wall-clock budget: a file over it is named at the end, so the suite stays near 5 minutes. */
const BUDGET_S = Number(process.env.HANDOFF_TEST_BUDGET_S ?? 90);
/** A file that runs this long is killed and counted as failed: nothing in the suite may hang. */
const KILL_AFTER_S = Number(process.env.HANDOFF_TEST_KILL_S ?? 600);
// Cores + 1. Four at a time on 2 cores measured no faster once the timings table was fresh (343 s
// against 347 at three; 408 against 596 while it was stale and 170 processes ran where 79 do).
const jobs = Math.max(1, Number(process.env.HANDOFF_TEST_JOBS ?? availableParallelism() + 1));
// Beyond those, up to this many more, each only while the running files by the rates table leave
// a core's share idle that it fits in (test/cpu-rates.json): with three at a time the cores sat
// idle whenever two of the three were waiting files.
const extraJobs = Math.max(0, Number(process.env.HANDOFF_TEST_EXTRA_JOBS ?? 2));

const patterns = process.argv.slice(2);
const all = readdirSync(join(root, "test"))
  .filter((f) => f.endsWith(".test.ts"))
  .filter((f) => !patterns.length || patterns.some((p) => f.includes(p)))
  .sort();
if (!all.length) {
  process.stderr.write(`no test file matches ${patterns.join(" ")}\n`);
  process.exit(2);
}

// What each file took in a full run here (test/timings.json, seconds of wall clock, measured 4 at a time):
// the longest start first, so no long file is left alone at the end, and the short ones share a
// process (test/support/uvu-files.ts) to save each a process start. A file not in the table yet
// counts as UNKNOWN_S and runs on its own. Refresh the table: HANDOFF_TEST_WRITE_TIMES=1 on a full run
// (it writes test/cpu-rates.json too).
const TIMES_FILE = join(root, "test/timings.json");
const times: Record<string, number> = JSON.parse(readFileSync(TIMES_FILE, "utf8"));
const UNKNOWN_S = 10;
/** A file this short (by the table) may share a process with others... */
const SHARE_UNDER_S = Number(process.env.HANDOFF_TEST_SHARE_UNDER_S ?? 12);
/** ...in groups of about this many seconds: small enough that the last ones do not hold up the end. */
const GROUP_S = 24;
const estimate = (f: string) => times[f] ?? UNKNOWN_S;
// How busy each file keeps a core while it runs (its CPU seconds over its wall seconds in the last
// full run that wrote the tables; test/cpu-rates.json): a file that mostly waits (on a stalled
// remote, a lock's timeout, a server's bound) leaves its core idle, and another file may run beside
// it. A file not in the table counts as busy as most.
const RATES_FILE = join(root, "test/cpu-rates.json");
const rates: Record<string, number> = (() => {
  try {
    return JSON.parse(readFileSync(RATES_FILE, "utf8"));
  } catch {
    return {};
  }
})();
const UNKNOWN_RATE = 0.8;
/**
 * A file that changes process.env, or imports another test file (hooks-fast.test.ts runs
 * hooks.test.ts's tests with HANDOFF_TEST_HOOK set), would leak into the files after it in a
 * shared process: it runs alone.
 */
const SHARES_STATE = /process\.env(\.\w+|\[[^\]]+\])\s*=(?!=)|delete process\.env|Object\.assign\(process\.env|(import\(|from\s*)["'`]\.\/[^"'`]*\.test\.ts/;
function mayShare(f: string): boolean {
  return f in times && times[f]! < SHARE_UNDER_S && !SHARES_STATE.test(readFileSync(join(root, "test", f), "utf8"));
}

/** What one process runs: one file, or several short ones in turn. */
interface Unit {
  files: string[];
  estimate: number;
}
const units: Unit[] = all.filter((f) => !mayShare(f)).map((f) => ({ files: [f], estimate: estimate(f) }));
const groups: Unit[] = [];
for (const f of all.filter(mayShare).sort((a, b) => estimate(b) - estimate(a))) {
  // First fit, longest first: each group fills up to about GROUP_S.
  const g = groups.find((g) => g.estimate + estimate(f) <= GROUP_S);
  if (g) {
    g.files.push(f);
    g.estimate += estimate(f);
  } else groups.push({ files: [f], estimate: estimate(f) });
}
const queue = [...units, ...groups].sort((a, b) => b.estimate - a.estimate);
/** The cores a unit keeps busy while it runs, by the rates table (its files' CPU over their wall time). */
function rateOf(unit: Unit): number {
  let cpu = 0;
  for (const f of unit.files) cpu += (rates[f] ?? UNKNOWN_RATE) * estimate(f);
  return unit.estimate > 0 ? cpu / unit.estimate : UNKNOWN_RATE;
}
if (process.env.HANDOFF_TEST_PLAN === "1") {
  // The plan only: which files share a process, in the order they would start.
  for (const u of queue) process.stdout.write(`${u.estimate.toFixed(1).padStart(6)} s  ${u.files.join(" ")}\n`);
  process.exit(0);
}

/**
 * The tests make thousands of small repositories, objects and locks: on a memory file system
 * their files cost no journal writes and no waits on the disk (a race-heavy file alone: about a
 * sixth less wall time, half the system time). Every process of the run gets the same folder as
 * TMPDIR, so every test's temp folders, and the temp folders of what they start, land there; it
 * is removed at the end, and folders of runs that died (their pid gone) at the next start.
 */
const SHM = "/dev/shm";
const SHM_MIN_FREE = 4 * 1024 ** 3;
function testTempDir(): string | null {
  try {
    const fs = statfsSync(SHM);
    // 0x01021994: TMPFS_MAGIC. Anything else (a disk, or no /dev/shm at all) keeps $TMPDIR.
    if (fs.type !== 0x01021994 || fs.bavail * fs.bsize < SHM_MIN_FREE) return null;
    // Tests run scripts and hooks from their temp folders.
    const mount = readFileSync("/proc/mounts", "utf8").split("\n").find((l) => l.split(" ")[1] === SHM);
    if (!mount || mount.split(" ")[3]!.split(",").includes("noexec")) return null;
    removeDeadRuns(SHM, /^handoff-tests-(\d+)-/);
    return mkdtempSync(join(SHM, `handoff-tests-${process.pid}-`));
  } catch {
    return null;
  }
}
const ownTemp = process.env.HANDOFF_TEST_TMPDIR ? null : testTempDir();
const childTemp = process.env.HANDOFF_TEST_TMPDIR ?? ownTemp;

/**
 * The test processes' environment. NODE_EXTRA_CA_CERTS is left out: Node loads that bundle at
 * every start, before any script (~45 ms of CPU each where it names the system's whole bundle, as
 * on the machines here), and the suite starts thousands of Node processes, none of which reaches
 * a server it would certify (test/support/repo.ts cleanEnv says the same for the processes tests start).
 */
const testEnv: NodeJS.ProcessEnv = { ...process.env, FORCE_COLOR: "0", NO_COLOR: "1", ...(childTemp ? { TMPDIR: childTemp } : {}) };
delete testEnv.NODE_EXTRA_CA_CERTS;

interface FileResult {
  file: string;
  seconds: number;
  /** CPU seconds of the file's tests and the processes they started (null where not measured). */
  cpu: number | null;
  total: number;
  passed: number;
  skipped: number;
  code: number;
  output: string;
}

const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");
const count = (out: string, label: string) => Number(new RegExp(`^\\s*${label}:\\s+(\\d+)`, "m").exec(strip(out))?.[1] ?? 0);

/** Runs the unit's files in one process; a file's result comes from its part of the output. */
function runUnit(unit: Unit): Promise<FileResult[]> {
  const started = Date.now();
  return new Promise((done) => {
    const child = spawn(process.execPath, unitCommand(unit), {
      cwd: root,
      env: testEnv,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const killer = setTimeout(() => {
      output += `\n[run] ${unit.files.join(", ")} still running after ${KILL_AFTER_S} s: killed\n`;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {}
    }, KILL_AFTER_S * 1000);
    child.on("close", (code) => {
      clearTimeout(killer);
      done(splitResults(unit, output, code ?? 1, (Date.now() - started) / 1000));
    });
  });
}

/**
 * Each file's part of a unit's output, between its start and end marks. A file whose end mark is
 * missing (the process died or was killed in it) failed, with whatever came after its start; a file
 * whose start never came is rerun on its own by the caller.
 */
function splitResults(unit: Unit, output: string, code: number, seconds: number): FileResult[] {
  const results: FileResult[] = [];
  const marks = [...output.matchAll(new RegExp(`^${MARK} (start|end) (\\S+)(?: (\\d+) ([\\d.]+)(?: ([\\d.]+))?)?$`, "gm"))];
  for (const file of unit.files) {
    const path = join("test", file);
    const start = marks.find((m) => m[1] === "start" && m[2] === path);
    if (!start) continue;
    const end = marks.find((m) => m[1] === "end" && m[2] === path);
    const part = output.slice(start.index! + start[0].length, end ? end.index : undefined).replace(/^\n/, "");
    const fileCode = end ? Number(end[3]) : code || 1;
    const total = count(part, "Total");
    results.push({ file, seconds: end ? Number(end[4]) : seconds, cpu: end?.[5] ? Number(end[5]) : null, total, passed: count(part, "Passed"), skipped: count(part, "Skipped"), code: fileCode, output: end ? part : `${part}\n[run] the process ended (exit ${code}) before this file did\n${output.slice(0, start.index)}` });
  }
  // Output before any mark (the runner itself failing to load) belongs to every file of the unit.
  if (!results.length) results.push(...unit.files.slice(0, 1).map((file) => ({ file, seconds, cpu: null, total: 0, passed: 0, skipped: 0, code: code || 1, output })));
  return results;
}

/**
 * The test processes run the files' bundles, built here in one esbuild call, with plain `node`:
 * tsx's registration and its transform of src/ cost each process ~0.5-1.2 CPU-seconds. When a
 * file does not build, the run goes on under tsx, where that file fails alone, as it always did.
 */
async function bundleFiles(): Promise<TestBundles | null> {
  if (process.env.HANDOFF_TEST_TSX === "1") return null;
  try {
    return await bundleTests(root, all.map((f) => `test/${f}`));
  } catch (e) {
    process.stdout.write(`[run] the test files did not bundle (${String((e as Error)?.message ?? e).split("\n")[0]}): running the sources under tsx\n`);
    return null;
  }
}
const bundles = await bundleFiles();
const unitCommand = (unit: Unit): string[] => {
  const files = unit.files.map((f) => join("test", f));
  return bundles ? ["--enable-source-maps", bundles.runner, `--bundles=${bundles.dir}`, ...files] : ["--import", "tsx", filesRunner, ...files];
};

const results: FileResult[] = [];
const started = Date.now();
let processes = 0;
/**
 * The next unit to start beside `running`: the longest waiting while fewer than `jobs` run; past
 * that, the longest whose rate fits in what the running ones leave idle of the cores, up to
 * `extraJobs` more.
 */
function nextUnit(running: Set<Unit>): Unit | undefined {
  if (!queue.length) return undefined;
  if (running.size < jobs) return queue.shift();
  if (running.size >= jobs + extraJobs) return undefined;
  let busy = 0;
  for (const u of running) busy += rateOf(u);
  const room = availableParallelism() - busy;
  const i = queue.findIndex((u) => rateOf(u) <= room);
  return i < 0 ? undefined : queue.splice(i, 1)[0];
}
function report(unit: Unit, got: FileResult[]): void {
  // Files a dead process never reached run again, each on its own.
  for (const file of unit.files.filter((f) => !got.some((r) => r.file === f))) queue.push({ files: [file], estimate: estimate(file) });
  for (const r of got) {
    results.push(r);
    const failed = fileFailed(r);
    process.stdout.write(`${failed ? "FAIL" : "ok  "} ${r.file.padEnd(34)} ${String(r.passed).padStart(3)}/${String(r.total).padEnd(3)} ${r.seconds.toFixed(1).padStart(6)} s${unit.files.length > 1 ? `  (shared, ${unit.files.length} files)` : ""}\n`);
    // A failing file's whole output, so the failure reads as uvu printed it.
    if (failed) process.stdout.write(strip(r.output).replace(/^/gm, "    | ") + "\n");
    if (failed && r.code === 0 && r.total > 0) process.stdout.write(`    | [run] ${r.total - r.passed - r.skipped} of ${r.total} tests neither passed nor failed: uvu says nothing when a before hook throws\n`);
  }
}
await new Promise<void>((allDone) => {
  const running = new Set<Unit>();
  const startMore = (): void => {
    for (let unit = nextUnit(running); unit; unit = nextUnit(running)) {
      const u = unit;
      running.add(u);
      processes++;
      void runUnit(u).then((got) => {
        running.delete(u);
        report(u, got);
        startMore();
      });
    }
    if (!running.size && !queue.length) allDone();
  };
  startMore();
});

/**
 * A file failed when its process did, when it ran nothing, or when fewer of its tests passed than
 * it has: uvu exits 0 and counts nothing failed when a suite's `before` hook throws (a browser that
 * does not start), so a file whose tests never ran would otherwise pass.
 */
function fileFailed(r: FileResult): boolean {
  return r.code !== 0 || r.total === 0 || r.passed + r.skipped < r.total;
}
const sum = (k: "total" | "passed" | "skipped") => results.reduce((s, r) => s + r[k], 0);
const failedFiles = results.filter(fileFailed);
const wall = (Date.now() - started) / 1000;
process.stdout.write("\nslowest files (budget " + BUDGET_S + " s each):\n");
for (const r of [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 8)) {
  process.stdout.write(`  ${r.seconds.toFixed(1).padStart(6)} s  ${r.file}${r.seconds > BUDGET_S ? "  OVER BUDGET" : ""}\n`);
}
// The suite is CPU-bound on a small machine (every CLI call is a Node process): where the CPU
// goes says more than wall times that each include waiting for the other files' processes.
const measured = results.filter((r) => r.cpu !== null);
if (measured.length) {
  const byCpu = [...measured].sort((a, b) => b.cpu! - a.cpu!);
  process.stdout.write("\nmost CPU (the file's tests and the processes they started):\n");
  for (const r of byCpu.slice(0, 8)) process.stdout.write(`  ${r.cpu!.toFixed(1).padStart(6)} s  ${r.file}\n`);
  const cpu = measured.reduce((s, r) => s + r.cpu!, 0);
  // HANDOFF_TEST_CPU_LOG=<file>: every file's figures, `<file>\t<wall s>\t<CPU s>` a line, most CPU first.
  if (process.env.HANDOFF_TEST_CPU_LOG) writeFileSync(process.env.HANDOFF_TEST_CPU_LOG, byCpu.map((r) => `${r.file}\t${r.seconds.toFixed(1)}\t${r.cpu!.toFixed(1)}\n`).join(""));
  process.stdout.write(`  ${cpu.toFixed(0)} CPU-seconds in all: ${(cpu / wall).toFixed(2)} of the ${availableParallelism()} cores busy on average\n`);
}
process.stdout.write(`\n${results.length} files in ${processes} processes, ${jobs} at a time (up to ${jobs + extraJobs} beside files that wait), ${wall.toFixed(0)} s${childTemp ? `, temp folders in ${childTemp}` : ""}\n`);
process.stdout.write(`  Total:     ${sum("total")}\n  Passed:    ${sum("passed")}\n  Skipped:   ${sum("skipped")}\n`);
if (process.env.HANDOFF_TEST_WRITE_TIMES === "1") {
  for (const r of results) times[r.file] = Math.round(r.seconds * 10) / 10;
  for (const r of results) if (r.cpu !== null && r.seconds > 0) rates[r.file] = Math.round((100 * r.cpu) / r.seconds) / 100;
  const sorted = (t: Record<string, number>) => JSON.stringify(Object.fromEntries(Object.entries(t).sort(([a], [b]) => a.localeCompare(b))), null, 1) + "\n";
  writeFileSync(TIMES_FILE, sorted(times));
  writeFileSync(RATES_FILE, sorted(rates));
}
if (failedFiles.length) process.stdout.write(`failed: ${failedFiles.map((r) => r.file).join(", ")}\n`);
if (ownTemp) rmSync(ownTemp, { recursive: true, force: true });
if (bundles) rmSync(bundles.dir, { recursive: true, force: true });
process.exit(failedFiles.length ? 1 : 0);
