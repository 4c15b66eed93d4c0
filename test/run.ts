// The suite's runner: each test file in its own uvu process, several at once, so one slow file
// (a real remote, a real agent client) does not hold up the rest. Prints each file's result as it
// finishes, then uvu's own totals (what CI reads) and the slowest files against the per-file budget.
//
//   node --import tsx test/run.ts [pattern ...]   (a pattern is a substring of a file name)
//   HANDOFF_TEST_JOBS=N   how many files at once (default: cores + 1; test files mostly wait on git)
import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const uvu = join(root, "node_modules/uvu/bin.js");
/** Per-file wall-clock budget: a file over it is named at the end, so the suite stays near 5 minutes. */
const BUDGET_S = Number(process.env.HANDOFF_TEST_BUDGET_S ?? 90);
/** A file that runs this long is killed and counted as failed: nothing in the suite may hang. */
const KILL_AFTER_S = Number(process.env.HANDOFF_TEST_KILL_S ?? 600);
const jobs = Math.max(1, Number(process.env.HANDOFF_TEST_JOBS ?? availableParallelism() + 1));

const patterns = process.argv.slice(2);
const all = readdirSync(join(root, "test"))
  .filter((f) => f.endsWith(".test.ts"))
  .filter((f) => !patterns.length || patterns.some((p) => f.includes(p)))
  .sort();
if (!all.length) {
  process.stderr.write(`no test file matches ${patterns.join(" ")}\n`);
  process.exit(2);
}

// Files known to be slow start first, so the long ones do not end up alone at the end.
const SLOW_FIRST = ["sync-", "task-races", "demo", "mcp-stdio", "agents-real", "handover", "dashboard", "hooks"];
const queue = [...all].sort((a, b) => rank(a) - rank(b));
function rank(f: string): number {
  const i = SLOW_FIRST.findIndex((p) => f.includes(p));
  return i === -1 ? SLOW_FIRST.length : i;
}

interface FileResult {
  file: string;
  seconds: number;
  total: number;
  passed: number;
  skipped: number;
  code: number;
  output: string;
}

const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");
const count = (out: string, label: string) => Number(new RegExp(`^\\s*${label}:\\s+(\\d+)`, "m").exec(strip(out))?.[1] ?? 0);

function runFile(file: string): Promise<FileResult> {
  const started = Date.now();
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", uvu, "test", `^${file.replace(/\./g, "\\.")}$`], {
      cwd: root,
      env: { ...process.env, FORCE_COLOR: "0", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const killer = setTimeout(() => {
      output += `\n[run] ${file} still running after ${KILL_AFTER_S} s: killed\n`;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {}
    }, KILL_AFTER_S * 1000);
    child.on("close", (code) => {
      clearTimeout(killer);
      const total = count(output, "Total");
      done({ file, seconds: (Date.now() - started) / 1000, total, passed: count(output, "Passed"), skipped: count(output, "Skipped"), code: code ?? 1, output });
    });
  });
}

const results: FileResult[] = [];
const started = Date.now();
let next = 0;
async function worker(): Promise<void> {
  while (next < queue.length) {
    const file = queue[next++]!;
    const r = await runFile(file);
    results.push(r);
    const failed = r.code !== 0 || r.total === 0;
    process.stdout.write(`${failed ? "FAIL" : "ok  "} ${file.padEnd(34)} ${String(r.passed).padStart(3)}/${String(r.total).padEnd(3)} ${r.seconds.toFixed(1).padStart(6)} s\n`);
    // A failing file's whole output, so the failure reads as uvu printed it.
    if (failed) process.stdout.write(strip(r.output).replace(/^/gm, "    | ") + "\n");
  }
}
await Promise.all(Array.from({ length: Math.min(jobs, queue.length) }, worker));

const sum = (k: "total" | "passed" | "skipped") => results.reduce((s, r) => s + r[k], 0);
const failedFiles = results.filter((r) => r.code !== 0 || r.total === 0);
const wall = (Date.now() - started) / 1000;
process.stdout.write("\nslowest files (budget " + BUDGET_S + " s each):\n");
for (const r of [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 8)) {
  process.stdout.write(`  ${r.seconds.toFixed(1).padStart(6)} s  ${r.file}${r.seconds > BUDGET_S ? "  OVER BUDGET" : ""}\n`);
}
process.stdout.write(`\n${results.length} files, ${jobs} at a time, ${wall.toFixed(0)} s\n`);
process.stdout.write(`  Total:     ${sum("total")}\n  Passed:    ${sum("passed")}\n  Skipped:   ${sum("skipped")}\n`);
if (failedFiles.length) process.stdout.write(`failed: ${failedFiles.map((r) => r.file).join(", ")}\n`);
process.exit(failedFiles.length ? 1 : 0);
