// Issue 2's speed figures: `git handoff claim` as a whole process against a bare `node -e 0`
// (target <= 1.5x), and uncontended claims per second inside one process (target >= 300/s).
import { spawnSync } from "node:child_process";
import { addTask } from "../../src/store/task-store.ts";
import { claim } from "../../src/store/task-actions.ts";
import { openSyncedStore as openStore } from "../../src/sync/open.ts";
import { CLI, cleanEnv, cleanupTemp, tempRepo } from "../support/repo.ts";
import { fmt, interleave } from "./stats.ts";

const ROUNDS = 25;
const repo = tempRepo();
const env = cleanEnv({ HANDOFF_AGENT: "bench" });

async function prepare(n: number, prefix: string): Promise<string[]> {
  const store = await openStore({ cwd: repo, agent: "lead", warm: true });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await addTask(store, { id: `${prefix}${i}`, objective: `task ${i}`, priority: 0, scope: [], maxAttempts: 3 })).id);
  store.close();
  return ids;
}

const cliIds = await prepare(ROUNDS, "cli-");
// Warm the page cache and Node's compile cache alike for both sides.
spawnSync(process.execPath, ["-e", "0"]);
// A real command, so the code cache written after it holds the claim path.
spawnSync(process.execPath, [CLI, "task", "list"], { cwd: repo, env });

const run = (args: string[]) => {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd: repo, env, stdio: ["ignore", "ignore", "pipe"] });
  if (r.status !== 0) throw new Error(`exit ${r.status}: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t) / 1e6;
};
// One agent claims every round's task: past the default capacity of one, as --over-capacity says.
const e2e = interleave(ROUNDS, () => run(["-e", "0"]), (i) => run([CLI, "claim", cliIds[i]!, "--over-capacity"]));
console.log(`claim end to end: median ${fmt(e2e.b, 1)} ms vs node -e 0 ${fmt(e2e.a, 1)} ms -> ${fmt(e2e.ratio)}x node start (target <= 1.5x)`);

async function claimsPerSecond(warm: boolean, n: number): Promise<number> {
  const ids = await prepare(n, warm ? "warm-" : "cold-");
  const store = await openStore({ cwd: repo, agent: "worker", warm });
  const t = process.hrtime.bigint();
  for (const id of ids) await claim(store, id);
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  store.close();
  return n / s;
}

const cold = await claimsPerSecond(false, 150);
const warm = await claimsPerSecond(true, 600);
console.log(`claims per second in one process: ${fmt(warm, 0)}/s with a warm update-ref session (target >= 300/s); ${fmt(cold, 0)}/s spawning git per write (${fmt(warm / cold)}x)`);
cleanupTemp();
