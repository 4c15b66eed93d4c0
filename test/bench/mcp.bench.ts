// Issue 6's speed figures: uncontended claim_task calls per second through a real stdio client
// and the built server (target >= 300/s), one call after another; and the p50 of check_files
// with 1,000 live leases (100 agents x 10).
// Run after `npm run build`: node --import tsx test/bench/mcp.bench.ts
import { addTask } from "../../src/store/task-store.ts";
import { openSyncedStore as openStore } from "../../src/sync/open.ts";
import { overStdio } from "../support/mcp.ts";
import { cleanupTemp, tempRepo } from "../support/repo.ts";
import { seedLeases } from "./lease-fixture.ts";
import { fmt, median } from "./stats.ts";

const WARMUP = 50;
const N = 1000;
const CHECKS = Number(process.env.BENCH_CHECKS ?? 300);
const repo = tempRepo();

const store = await openStore({ cwd: repo, agent: "lead", warm: true });
for (let i = 0; i < WARMUP + N; i++) await addTask(store, { id: `b-${i}`, objective: `task ${i}`, priority: 0, scope: [], maxAttempts: 3 });
store.close();

const agent = await overStdio(repo, { agent: "bench", checkOutput: false });
try {
  // One agent takes 1,050 tasks: past the repository's capacity (max_concurrent, default 1), as
  // an agent that means to hold more says with over_capacity.
  for (let i = 0; i < WARMUP; i++) await agent.ok("claim_task", { id: `b-${i}`, over_capacity: true });
  const lat: number[] = [];
  const t0 = process.hrtime.bigint();
  for (let i = WARMUP; i < WARMUP + N; i++) {
    const t = process.hrtime.bigint();
    const r = await agent.call("claim_task", { id: `b-${i}`, over_capacity: true });
    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (r.isError) throw new Error(`claim b-${i} failed: ${JSON.stringify(r.content)}`);
  }
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  lat.sort((a, b) => a - b);
  const p99 = lat[Math.floor(lat.length * 0.99)]!;
  console.log(
    `claim_task over stdio (real SDK client + built server, ${N} calls one after another): ${fmt(N / secs, 0)}/s (target >= 300/s); ` +
      `latency p50 ${fmt(median(lat))} ms, p99 ${fmt(p99)} ms`,
  );

  // check_files with 100 agents x 10 live leases: a file another agent leases (warn), one inside
  // an exclusive glob (deny, an isError result) and one nobody holds (ok).
  await seedLeases(repo, 100, 10);
  const cases = [
    { name: "warn", path: "pkg42/src/file3.ts", denied: false },
    { name: "deny", path: "pkg40/lib8/x.ts", denied: true },
    { name: "free", path: "pkg42/src/other.ts", denied: false },
  ];
  const perCase: Record<string, number[]> = {};
  for (const c of cases) {
    const probe = await agent.call("check_files", { paths: [c.path] });
    if (!!probe.isError !== c.denied) throw new Error(`check_files ${c.path}: unexpected answer ${JSON.stringify(probe.content)}`);
    perCase[c.name] = [];
  }
  for (let i = 0; i < CHECKS; i++) {
    for (const c of cases) {
      const t = process.hrtime.bigint();
      await agent.call("check_files", { paths: [c.path] });
      perCase[c.name]!.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  }
  const all = Object.values(perCase).flat();
  console.log(
    `check_files over stdio with 1,000 live leases (${CHECKS} calls per case): p50 ${fmt(median(all))} ms ` +
      `(warn ${fmt(median(perCase.warn!))} ms, deny ${fmt(median(perCase.deny!))} ms, free ${fmt(median(perCase.free!))} ms)`,
  );
} finally {
  await agent.close();
  cleanupTemp();
}
