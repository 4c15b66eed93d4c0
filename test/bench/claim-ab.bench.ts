// This build's warm MCP claim against another build's (BENCH_AB_CLI: the path of its
// dist/git-handoff.cjs, e.g. main's) and the peer, interleaved claim by claim in one run, so a
// shared machine's load hits all alike; then eight clients racing claim_next over 1,000 tasks with
// scopes on each build, with the CPU time all eight servers spent per grant (user + system, from
// /proc: a figure load inflates less than wall time) and how much of it their main threads spent
// (the rest: V8's compiler threads and libuv's, which make files ahead: on an ext4 without a
// journal each new file costs more the more files were deleted in the last minutes, so that part
// follows what ran on the machine before). Without BENCH_AB_CLI it says so and exits.
//   npm run build && BENCH_AB_CLI=/work/main/dist/git-handoff.cjs node --import tsx test/bench/claim-ab.bench.ts
// BENCH_AB_SIZES (default 20,1000), BENCH_SAMPLES (default 40), BENCH_RACE_MS (default 8000),
// BENCH_RACERS (default 8: the issue's figure; 1 or 2 show what a claim costs without contention; 0 skips the races),
// BENCH_RACE_WARM (default 0: each racer first claims and releases a task of its own this many
// times, so the race measures servers past V8's compiles, as a server that has run for a while).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { CLI, cleanEnv, cleanupTemp, tempDir, tempRepo } from "../support/repo.ts";
import { fmt, median } from "./stats.ts";
import { seedPeerTasks, seedTasks, taskId } from "./task-fixture.ts";

const OTHER = process.env.BENCH_AB_CLI;
const SIZES = (process.env.BENCH_AB_SIZES ?? "20,1000").split(",").filter(Boolean).map(Number);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 40);
const RACE_MS = Number(process.env.BENCH_RACE_MS ?? 8000);
const RACERS = Number(process.env.BENCH_RACERS ?? 8);
const RACE_WARM = Number(process.env.BENCH_RACE_WARM ?? 0);
/** The pause before each timed warm claim. */
const SETTLE_MS = 20;

interface Server {
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  pid: number;
  close(): Promise<void>;
}

async function start(command: string, args: string[], cwd: string, agent: string): Promise<Server> {
  const env = Object.fromEntries(Object.entries(cleanEnv({ HANDOFF_AGENT: agent })).filter((e): e is [string, string] => e[1] !== undefined));
  const transport = new StdioClientTransport({ command, args, cwd, env, stderr: "ignore" });
  const client = new Client({ name: "claim-ab", version: "0" });
  await client.connect(transport);
  return {
    call: async (name, a) => {
      const r = (await client.callTool({ name, arguments: a }, undefined, { timeout: 300_000 })) as CallToolResult;
      if (r.isError && name !== "claim_next") throw new Error(`${name}: ${JSON.stringify(r.content).slice(0, 300)}`);
      return r;
    },
    pid: transport.pid ?? 0,
    close: () => client.close(),
  };
}

function peerBinary(): string | null {
  try {
    const bin = join(dirname(createRequire(import.meta.url).resolve("handoff-mcp-server-linux-x64/package.json")), "bin", "handoff-mcp");
    return existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

/** CPU time (user + system) of processes, in milliseconds; `main`: of their main threads only. */
function cpuMs(pids: number[], main = false): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const f = readFileSync(main ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      /* gone */
    }
  }
  return ticks * 10;
}

async function claims(n: number): Promise<void> {
  const sides: { name: string; claim: (id: string) => Promise<unknown>; release: (id: string) => Promise<unknown>; xs: number[]; close: () => Promise<void> }[] = [];
  for (const [name, cli] of [["this", CLI], ["other", OTHER!]] as const) {
    const repo = tempRepo();
    await seedTasks(repo, n);
    const s = await start(process.execPath, [cli, "mcp"], repo, "bench");
    sides.push({ name, claim: (id) => s.call("claim_task", { id }), release: (id) => s.call("release_task", { id }), xs: [], close: s.close });
  }
  const bin = peerBinary();
  if (bin) {
    const dir = tempDir("handoff-peer-");
    const s = await start(bin, [], dir, "bench");
    const call = (name: string, a: Record<string, unknown>) => s.call(name, { project_dir: dir, ...a });
    await call("handoff_init", { project_name: "bench" });
    seedPeerTasks(dir, n);
    sides.push({ name: "peer", claim: (id) => call("handoff_claim_task", { task_id: id, session_id: "bench" }), release: (id) => call("handoff_reclaim_task", { task_id: id, reason: "bench" }), xs: [], close: s.close });
  }
  const warmup = 20;
  for (let i = 0; i < warmup + SAMPLES; i++) {
    const id = taskId(i % n);
    // A server's work after its answer (temp files made ahead on libuv's threads) overlapped
    // whichever side was timed next: with a fixed order the same bundle under two names measured
    // 0.67-0.85x the other. So the order turns each round, and each claim is timed after a pause
    // in which the last one's work settles.
    for (let k = 0; k < sides.length; k++) {
      const s = sides[(i + k) % sides.length]!;
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const t = process.hrtime.bigint();
      await s.claim(id);
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      await s.release(id);
      if (i >= warmup) s.xs.push(ms);
    }
  }
  for (const s of sides) await s.close();
  const m = Object.fromEntries(sides.map((s) => [s.name, median(s.xs)]));
  const vsPeer = (x: number) => (m.peer === undefined ? "peer unavailable" : `${fmt(x / m.peer, 2)}x`);
  console.log(
    `warm claim_task, ${n.toLocaleString("en")} live tasks: this ${fmt(m.this!)} ms, other ${fmt(m.other!)} ms${m.peer === undefined ? "" : `, peer ${fmt(m.peer)} ms`}; ` +
      `this / other ${fmt(m.this! / m.other!, 2)}x, this / peer ${vsPeer(m.this!)}, other / peer ${vsPeer(m.other!)} (load ${fmt(loadavg()[0]!, 1)})`,
  );
}

type RaceResult = { rate: number; cpuPerGrant: number; mainPerGrant: number; doubles: number };

/** Two races of one build as one figure: the mean rate, the mean CPU per grant, every double grant. */
function both(x: RaceResult, y: RaceResult): RaceResult {
  return { rate: (x.rate + y.rate) / 2, cpuPerGrant: (x.cpuPerGrant + y.cpuPerGrant) / 2, mainPerGrant: (x.mainPerGrant + y.mainPerGrant) / 2, doubles: x.doubles + y.doubles };
}

async function race(cli: string, ms = RACE_MS): Promise<RaceResult> {
  const repo = tempRepo();
  await seedTasks(repo, 1000);
  const servers = await Promise.all(Array.from({ length: RACERS }, (_, k) => start(process.execPath, [cli, "mcp"], repo, `racer-${k}`)));
  await Promise.all(servers.map((s) => s.call("ready_tasks", { limit: 1 })));
  await Promise.all(
    servers.map(async (s, k) => {
      for (let i = 0; i < RACE_WARM; i++) {
        await s.call("claim_task", { id: taskId(999 - k), over_capacity: true });
        await s.call("release_task", { id: taskId(999 - k) });
      }
    }),
  );
  // Past each server's start-up work (temp files made ahead) before the clock starts.
  await new Promise((r) => setTimeout(r, 1500));
  const granted: string[] = [];
  const c0 = cpuMs(servers.map((s) => s.pid));
  const m0 = cpuMs(servers.map((s) => s.pid), true);
  const t0 = Date.now();
  await Promise.all(
    servers.map(async (s) => {
      while (Date.now() - t0 < ms) {
        const r = await s.call("claim_next", { over_capacity: true });
        if (r.isError) {
          if (JSON.stringify(r.structuredContent ?? r.content).includes("no_task_ready")) return;
          throw new Error(`claim_next: ${JSON.stringify(r.content).slice(0, 300)}`);
        }
        granted.push((r.structuredContent as { task: { id: string } }).task.id);
      }
    }),
  );
  const secs = (Date.now() - t0) / 1000;
  const cpu = cpuMs(servers.map((s) => s.pid)) - c0;
  const mainCpu = cpuMs(servers.map((s) => s.pid), true) - m0;
  await Promise.all(servers.map((s) => s.close()));
  const grants = Math.max(1, granted.length);
  return { rate: granted.length / secs, cpuPerGrant: cpu / grants, mainPerGrant: mainCpu / grants, doubles: granted.length - new Set(granted).size };
}

/** Each build's racers twice, A B B A, after a race not counted: the machine's speed drifts (and
 * what ran before it weighs on new files), so each side races once earlier and once later. */
async function races(other: string): Promise<void> {
  // Not counted: the first race of a run was the slowest whichever build ran it (this process's
  // own client code still compiling while it serves eight connections, on the same two cores).
  const first = await race(other, Math.min(RACE_MS, 1500));
  const a1 = await race(CLI);
  const b1 = await race(other);
  const b2 = await race(other);
  const a2 = await race(CLI);
  const a = both(a1, a2);
  const b = both(b1, b2);
  console.log(
    `${RACERS} client${RACERS === 1 ? "" : "s"} racing claim_next over 1,000 tasks with scopes${RACE_WARM ? `, each warmed by ${RACE_WARM} claims` : ""}: this ${fmt(a.rate, 1)}/s (races ${fmt(a1.rate, 1)}, ${fmt(a2.rate, 1)}; ${fmt(a.cpuPerGrant, 1)} ms CPU per grant, ${fmt(a.mainPerGrant, 1)} of it on main threads, ${a.doubles} double), ` +
      `other ${fmt(b.rate, 1)}/s (races ${fmt(b1.rate, 1)}, ${fmt(b2.rate, 1)}; ${fmt(b.cpuPerGrant, 1)} ms CPU per grant, ${fmt(b.mainPerGrant, 1)} on main threads; ${b.doubles} double); this / other ${fmt(a.rate / b.rate, 2)}x (load ${fmt(loadavg()[0]!, 1)})`,
  );
  if (first.doubles) console.log(`the uncounted first race granted ${first.doubles} task(s) twice`);
  if (a.doubles || b.doubles || first.doubles) process.exitCode = 1;
}

try {
  if (!OTHER) {
    console.log("claim-ab: set BENCH_AB_CLI to another build's dist/git-handoff.cjs to compare; skipped");
  } else {
    for (const n of SIZES) await claims(n);
    if (RACERS > 0) await races(OTHER);
  }
} finally {
  cleanupTemp();
}
