// Cold one-shot CLI calls as whole processes against `node -e 0`, interleaved in this run:
// `claim` (a new task and a new agent each round), `check` of a leased file, `task show`, and `--version` (the
// dispatcher alone: it answers without loading a bundle, so this is Node's start plus ours). Target: claim, check and task show <= 1.3x node -e 0.
// Every process runs without NODE_EXTRA_CA_CERTS (test/support/repo.ts cleanEnv): Node parses that
// bundle at every start, which would flatter each ratio; where the environment sets it, a row says what it adds.
// BENCH_TASKS=5000: the same three again in a repository of that many live tasks, their refs
// packed (as sync and big listings leave them): nothing a command reads should grow with them.
import { spawnSync } from "node:child_process";
import { CLI, cleanEnv, cleanupTemp, tempDir, tempRepo } from "../support/repo.ts";
import { fmt, median } from "./stats.ts";
import { seedTasks } from "./task-fixture.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21);
// BENCH_BASELINE=<other checkout>/dist/git-handoff.cjs: that build too, interleaved in the same
// rounds, each build with its own repository and code cache (an A/B against main).
const builds = [CLI, ...(process.env.BENCH_BASELINE ? [process.env.BENCH_BASELINE] : [])];
/** A timed whole process in `repo`, with a private code cache, as a user's own: the bench measures this build only. */
function runnerIn(repo: string): { env: NodeJS.ProcessEnv; run: (args: string[]) => number } {
  const env = cleanEnv({ HANDOFF_AGENT: "bench", XDG_CACHE_HOME: tempDir("handoff-bench-cache-") });
  const run = (args: string[]) => {
    const t = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { cwd: repo, env, stdio: ["ignore", "ignore", "pipe"] });
    if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`);
    return Number(process.hrtime.bigint() - t) / 1e6;
  };
  return { env, run };
}
const setups = builds.map((cli) => {
  const repo = tempRepo();
  const { run } = runnerIn(repo);
  for (let i = 0; i < ROUNDS + 20; i++) run([cli, "task", "add", `task ${i}`, "--id", `t${i}`, "--scope", `src/f${i}.ts`]);
  run([cli, "claim", "t0", "--agent", "holder"]); // t0's scope is leased: check has a lease to find
  // Warm the page cache and write the code cache with a real command, for node alike.
  for (let i = 0; i < 3; i++) run(["-e", "0"]), run([cli, "task", "show", "t1"]);
  return { cli, run };
});

// `build` and `key`: a row of one build's command, paired with the other build's row of the same key.
const cmds: { name: string; args: (i: number) => string[]; run: (args: string[]) => number; build?: number; key?: string }[] = [{ name: "node -e 0", args: () => ["-e", "0"], run: setups[0]!.run }];
// The environment's NODE_EXTRA_CA_CERTS, left out of every timed process (cleanEnv; test/bench/run.ts
// says so): one more row says what it would add to every Node start, ours and `node -e 0`'s alike.
const caCerts = process.env.BENCH_LEFT_OUT_CA_CERTS ?? process.env.NODE_EXTRA_CA_CERTS;
if (caCerts) {
  const env = cleanEnv({ NODE_EXTRA_CA_CERTS: caCerts });
  const run = (args: string[]) => {
    const t = process.hrtime.bigint();
    spawnSync(process.execPath, args, { env, stdio: "ignore" });
    return Number(process.hrtime.bigint() - t) / 1e6;
  };
  cmds.push({ name: "node -e 0 with NODE_EXTRA_CA_CERTS (left out above)", args: () => ["-e", "0"], run });
}
for (const [k, { cli, run }] of setups.entries()) {
  const tag = setups.length > 1 ? (k === 0 ? "this build: " : "baseline: ") : "";
  cmds.push(
    { name: `${tag}git handoff --version`, args: () => [cli, "--version"], run, build: k, key: "--version" },
    { name: `${tag}git handoff claim <id>`, args: (i) => [cli, "claim", `t${i + 20}`, "--agent", `worker-${i}`], run, build: k, key: "claim" },
    { name: `${tag}git handoff check <file>`, args: () => [cli, "check", "src/f0.ts"], run, build: k, key: "check" },
    { name: `${tag}git handoff task show <id>`, args: () => [cli, "task", "show", "t1"], run, build: k, key: "task show" },
  );
}
const BIG = Number(process.env.BENCH_TASKS ?? 0);
// One repository of BIG live tasks (written in bulk, refs packed) per build, each with its own code cache.
for (const [k, cli] of (BIG ? builds : []).entries()) {
  const repo = tempRepo();
  await seedTasks(repo, BIG);
  const { env, run } = runnerIn(repo);
  run([cli, "claim", "t-0", "--agent", "holder"]); // a leased scope for check to find
  spawnSync("git", ["pack-refs", "--all"], { cwd: repo, env });
  for (let i = 0; i < 3; i++) run([cli, "task", "show", "t-1"]), run([cli, "check", "area0/x.ts"]), run([cli, "claim", `t-${BIG - 1 - i}`, "--agent", `warm-${i}`]);
  const tag = `${builds.length > 1 ? (k === 0 ? "this build, " : "baseline, ") : ""}${BIG.toLocaleString("en")} tasks packed: `;
  const big = `${BIG.toLocaleString("en")} tasks packed: `;
  cmds.push(
    { name: `${tag}claim <id>`, args: (i) => [cli, "claim", `t-${10 + i}`, "--agent", `big-${i}`], run, build: k, key: `${big}claim` },
    { name: `${tag}check <file>`, args: () => [cli, "check", "area0/x.ts"], run, build: k, key: `${big}check` },
    { name: `${tag}task show <id>`, args: () => [cli, "task", "show", "t-1"], run, build: k, key: `${big}task show` },
  );
}
const times = cmds.map(() => [] as number[]);
// With a baseline, the two builds' rows take turns going first, round by round: a build always
// run second would always meet the machine as the first left it (its page cache, its load).
const order = cmds.map((_, k) => k);
const swapped = [...order.filter((k) => cmds[k]!.build === undefined), ...order.filter((k) => cmds[k]!.build === 1), ...order.filter((k) => cmds[k]!.build === 0)];
for (let i = 0; i < ROUNDS; i++) for (const k of i % 2 ? swapped : order) times[k]!.push(cmds[k]!.run(cmds[k]!.args(i)));
const node = median(times[0]!);
console.log(`cold one-shot calls, ${ROUNDS} rounds interleaved (target <= 1.3x node -e 0 for claim, check, task show)${setups.length > 1 ? `; baseline ${builds[1]}` : ""}`);
cmds.forEach((c, k) => {
  const ms = median(times[k]!);
  console.log(`  ${c.name.padEnd(52)} ${fmt(ms, 1).padStart(7)} ms  ${fmt(ms / node)}x`);
});
// Each round's time of this build over the baseline's, same command: the median of those pairs
// follows the machine's drift less than the ratio of two medians.
const pairs = cmds.flatMap((c, k) => (c.build === 0 ? [[k, cmds.findIndex((b) => b.build === 1 && b.key === c.key)] as const] : [])).filter(([, b]) => b >= 0);
if (pairs.length) {
  console.log(`  this build / baseline, the median of ${ROUNDS} same-round pairs (this build faster in how many):`);
  for (const [a, b] of pairs) {
    const r = times[a]!.map((t, i) => t / times[b]![i]!);
    console.log(`    ${cmds[a]!.key!.padEnd(50)} ${fmt(median(r), 3).padStart(7)}x  (${r.filter((x) => x < 1).length}/${ROUNDS})`);
  }
}
cleanupTemp();
