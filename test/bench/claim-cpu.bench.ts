// What one warm claim costs this process in CPU time (process.cpuUsage), as live tasks grow
// 20 -> 1,000 -> 10,000 and live file leases 0 -> 1,000: the flatness figures, read from CPU time
// because on a loaded shared machine wall time mostly measures the wait for a core. The server
// runs in this process (MCP SDK client and server over the in-memory transport); each claim is
// released again, untimed, so the number of live tasks stays put. Git's own processes
// (update-ref) are not counted here; peer.bench.ts gives the wall-time figures.
// Run: node --import tsx test/bench/claim-cpu.bench.ts
import { inProcess } from "../support/mcp.ts";
import { cleanupTemp, tempRepo } from "../support/repo.ts";
import { seedLeases } from "./lease-fixture.ts";
import { fmt, median } from "./stats.ts";
import { seedTasks, taskId } from "./task-fixture.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PER_ROUND = 10;

async function server(tasks: number, leases: number) {
  const repo = tempRepo();
  await seedTasks(repo, tasks);
  if (leases) await seedLeases(repo, leases / 10, 10);
  const mcp = await inProcess(repo, { agent: "bench" });
  for (let i = 0; i < 5; i++) {
    await mcp.ok("claim_task", { id: taskId(i) });
    await mcp.ok("release_task", { id: taskId(i) });
  }
  let next = 0;
  /** CPU ms of one claim (its release is not counted), over PER_ROUND claims. */
  const claimCpu = async () => {
    let spent = 0;
    for (let i = 0; i < PER_ROUND; i++) {
      const id = taskId(next++ % tasks);
      const u = process.cpuUsage();
      await mcp.ok("claim_task", { id });
      const d = process.cpuUsage(u);
      spent += (d.user + d.system) / 1000;
      await mcp.ok("release_task", { id });
    }
    return spent / PER_ROUND;
  };
  return { claimCpu, close: () => mcp.close() };
}

async function compare(label: string, a: Awaited<ReturnType<typeof server>>, b: Awaited<ReturnType<typeof server>>): Promise<void> {
  const xs: number[] = [];
  const ys: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    xs.push(await a.claimCpu());
    ys.push(await b.claimCpu());
  }
  console.log(`${label}: ${fmt(median(ys) / median(xs), 2)}x (CPU per claim ${fmt(median(xs))} -> ${fmt(median(ys))} ms)`);
}

try {
  const small = await server(20, 0);
  const mid = await server(1000, 0);
  const big = await server(10_000, 0);
  const leased = await server(200, 1000);
  const unleased = await server(200, 0);
  try {
    await compare("warm claim_task, live tasks with a scope 20 -> 1,000", small, mid);
    await compare("warm claim_task, live tasks with a scope 20 -> 10,000", small, big);
    await compare("claim of a task with a scope, live leases 0 -> 1,000 (200 tasks)", unleased, leased);
  } finally {
    for (const s of [small, mid, big, leased, unleased]) await s.close();
  }
} finally {
  cleanupTemp();
}
