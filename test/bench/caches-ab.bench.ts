// One-shot reads of the caches under .git/handoff (the pre-edit hook, `task list --json`, `check`,
// `task show`) on another build (AB_BASE: its dist/git-handoff.cjs) and this one, interleaved pair
// by pair with the order alternated, CPU from `perf stat -e task-clock`; each build on its own copy
// of one fixture (N tasks with scopes, 20 leases, the reader's session), so each keeps its own
// caches. Prints each build's median and the median of the paired ratios this/base.
//   npm run build && env -u NODE_EXTRA_CA_CERTS AB_BASE=<other>/dist/git-handoff.cjs node --import tsx test/bench/caches-ab.bench.ts
// N (default 1000 tasks), PAIRS (default 21).
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { cleanEnv, cleanupTemp, cli, tempRepo } from "../support/repo.ts";
import { seedTasks } from "./task-fixture.ts";
const A = process.env.AB_BASE;
if (!A) {
  console.log("AB_BASE (another build's dist/git-handoff.cjs) is not set: nothing to compare");
  process.exit(0);
}
const B = new URL("../../dist/git-handoff.cjs", import.meta.url).pathname;
const N = Number(process.env.N ?? 1000);
const PAIRS = Number(process.env.PAIRS ?? 21);
const repo = tempRepo();
await seedTasks(repo, N, { scoped: true });
for (let i = 0; i < 20; i++) cli(["lease", `dir${i}/**`], { cwd: repo, agent: `ag${i}` });
const env = { ...cleanEnv(), HANDOFF_AGENT: "reader" };
cli(["session", "start", "--objective", "read", "--files", "dir3/**"], { cwd: repo, agent: "reader" });
const payload = JSON.stringify({ session_id: "s-r", hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: `${repo}/dir3/a.ts`, content: "x\n" }, cwd: repo });
// One copy of the fixture per build: each keeps its own caches (the declared file is one name both write).
const repos: Record<string, string> = {};
for (const b of [A, B]) {
  repos[b] = `${repo}-${b === A ? "a" : "b"}`;
  spawnSync("cp", ["-a", repo, repos[b]!]);
}
function cpu(build: string, args: string[]): number {
  const r = spawnSync("perf", ["stat", "-x,", "-e", "task-clock", "node", build, ...args], { cwd: repos[build], env, encoding: "utf8", input: args[0] === "hook" ? payload.replaceAll(repo, repos[build]!) : "" });
  const line = r.stderr.split("\n").find((l) => l.includes("task-clock"));
  if (r.status !== 0 || !line) throw new Error(r.stderr);
  return Number(line.split(",")[0]);
}
const cmds: [string, string[]][] = [
  ["pre-edit hook dir3/a.ts", ["hook", "claude-pre-tool-use"]],
  ["task list --json", ["task", "list", "--json"]],
  ["check dir3/a.ts", ["check", "dir3/a.ts"]],
  ["task show t-5", ["task", "show", "t-5"]],
];
for (const [name, args] of cmds) {
  for (let w = 0; w < 3; w++) {
    cpu(A, args);
    cpu(B, args);
  }
  const ratios: number[] = [], as: number[] = [], bs: number[] = [];
  for (let i = 0; i < PAIRS; i++) {
    let a: number, b: number;
    if (i % 2) {
      a = cpu(A, args);
      b = cpu(B, args);
    } else {
      b = cpu(B, args);
      a = cpu(A, args);
    }
    ratios.push(b / a); as.push(a); bs.push(b);
  }
  const med = (x: number[]) => [...x].sort((p, q) => p - q)[x.length >> 1]!;
  console.log(`${name}: ${N} tasks, ${PAIRS} pairs: median task-clock base ${med(as).toFixed(1)} ms, this ${med(bs).toFixed(1)} ms, median paired ratio this/base ${med(ratios).toFixed(3)}`);
}
for (const r of Object.values(repos)) rmSync(r, { recursive: true, force: true });
cleanupTemp();
