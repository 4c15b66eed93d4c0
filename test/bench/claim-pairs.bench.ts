// This build's warm MCP claim_task against another build's (BENCH_AB_CLI: its dist/git-handoff.cjs),
// claim by claim, in blocks of fresh server pairs: the figure to decide whether a change to the
// claim's path is kept. Two servers of the same bundle differ by more than such a change: over 50
// paired claims, one pair of servers read 0.93x and the next 1.18x (load ~10). A single pair of
// servers, however many claims it times, measures that pair; the ratio over many pairs measures
// the builds. So each block starts a server of each build on a repository of its own (the start
// order alternating), warms both, then times a claim on each after a pause (the order alternating
// each round), each claim released again untimed, as claim-ab.bench.ts does.
//   npm run build && BENCH_AB_CLI=/work/main/dist/git-handoff.cjs node --import tsx test/bench/claim-pairs.bench.ts
// BENCH_PAIR_BLOCKS (default 20), BENCH_PAIR_ROUNDS per block (default 50), BENCH_PAIR_TASKS live
// tasks (default 20). It prints each build's median, the median and the trimmed geometric mean of
// the paired ratios this / other, and the block medians' spread.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { loadavg } from "node:os";
import { CLI, cleanEnv, cleanupTemp, tempRepo } from "../support/repo.ts";
import { fmt, median } from "./stats.ts";
import { seedTasks, taskId } from "./task-fixture.ts";

const OTHER = process.env.BENCH_AB_CLI;
const BLOCKS = Number(process.env.BENCH_PAIR_BLOCKS ?? 20);
const ROUNDS = Number(process.env.BENCH_PAIR_ROUNDS ?? 50);
const TASKS = Number(process.env.BENCH_PAIR_TASKS ?? 20);
/** The pause before each timed claim (claim-ab.bench.ts's). */
const SETTLE_MS = 20;
/** Untimed claims and releases a fresh server makes first (its compiles, its pools filled). */
const WARMUP = 20;

interface Side {
  claim(id: string): Promise<void>;
  release(id: string): Promise<void>;
  close(): Promise<void>;
}

async function start(cli: string): Promise<Side> {
  const repo = tempRepo();
  await seedTasks(repo, TASKS);
  const env = Object.fromEntries(Object.entries(cleanEnv({ HANDOFF_AGENT: "bench" })).filter((e): e is [string, string] => e[1] !== undefined));
  const client = new Client({ name: "claim-pairs", version: "0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [cli, "mcp"], cwd: repo, env, stderr: "ignore" }));
  const call = async (name: string, id: string) => {
    const r = await client.callTool({ name, arguments: { id } }, undefined, { timeout: 300_000 });
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content).slice(0, 300)}`);
  };
  return { claim: (id) => call("claim_task", id), release: (id) => call("release_task", id), close: () => client.close() };
}

/** The mean of the logarithms with the lowest and highest tenth left out, as a ratio. */
function trimmedGeoMean(ratios: number[]): number {
  const logs = ratios.map(Math.log).sort((a, b) => a - b);
  const cut = Math.floor(logs.length / 10);
  const kept = logs.slice(cut, logs.length - cut);
  return Math.exp(kept.reduce((s, x) => s + x, 0) / kept.length);
}

async function main(): Promise<void> {
  if (!OTHER) {
    console.log("claim-pairs: set BENCH_AB_CLI to the other build's dist/git-handoff.cjs (e.g. main's) to compare; nothing run");
    return;
  }
  const times: [number[], number[]] = [[], []];
  const ratios: number[] = [];
  const blockMedians: number[] = [];
  for (let b = 0; b < BLOCKS; b++) {
    // [this, other], started in turn: a server started second meets the first one's start-up work.
    const sides: Side[] = b % 2 ? [await start(OTHER), await start(CLI)].reverse() : [await start(CLI), await start(OTHER)];
    const block: number[] = [];
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      const id = taskId(i % TASKS);
      const ms = [0, 0];
      for (let k = 0; k < 2; k++) {
        const j = (i + k + b) % 2;
        await new Promise((r) => setTimeout(r, SETTLE_MS));
        const t = process.hrtime.bigint();
        await sides[j]!.claim(id);
        ms[j] = Number(process.hrtime.bigint() - t) / 1e6;
        await sides[j]!.release(id);
      }
      if (i < WARMUP) continue;
      times[0].push(ms[0]!);
      times[1].push(ms[1]!);
      ratios.push(ms[0]! / ms[1]!);
      block.push(ms[0]! / ms[1]!);
    }
    blockMedians.push(median(block));
    for (const s of sides) await s.close();
    cleanupTemp();
  }
  const spread = [...blockMedians].sort((a, b) => a - b);
  console.log(
    `warm claim_task, ${TASKS.toLocaleString("en")} live tasks, ${BLOCKS} server pairs x ${ROUNDS} claims: this ${fmt(median(times[0]))} ms, other ${fmt(median(times[1]))} ms; ` +
      `paired this / other: median ${fmt(median(ratios), 3)}, trimmed geometric mean ${fmt(trimmedGeoMean(ratios), 3)}; ` +
      `block medians ${fmt(spread[0]!)}-${fmt(spread[spread.length - 1]!)} (median ${fmt(median(blockMedians), 3)}) (load ${fmt(loadavg()[0]!, 1)})`,
  );
}

await main();
