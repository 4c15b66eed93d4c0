// The dashboard at scale: time to first render in chromium with 1,000 tasks and 100 agents, against
// the same on an empty repository, and the server's CPU while idle with the page open.
//   npm run bench -- dashboard
import { readFileSync, readdirSync } from "node:fs";
import { startSessionFor } from "../../src/store/agent-store.ts";
import { claim } from "../../src/store/task-actions.ts";
import { addTask } from "../../src/store/task-store.ts";
import { openSyncedStore as openStore } from "../../src/sync/open.ts";
import { launchBrowser } from "../support/browser.ts";
import { startDashboard } from "../support/dashboard.ts";
import { cleanupTemp, tempRepo } from "../support/repo.ts";
import { fmt, median } from "./stats.ts";

const TASKS = 1000;
const AGENTS = 100;
const IDLE_S = Number(process.env.HANDOFF_BENCH_IDLE_S ?? 60);
const CLK_TCK = 100;

async function populate(repo: string): Promise<void> {
  const lead = await openStore({ cwd: repo, agent: "lead", warm: true });
  for (let i = 0; i < TASKS; i++) await addTask(lead, { id: `t${i}`, objective: `task number ${i}`, priority: i % 5, scope: [], maxAttempts: 3 });
  lead.close();
  for (let a = 0; a < AGENTS; a++) {
    const s = await openStore({ cwd: repo, agent: `agent-${a}`, warm: true });
    await startSessionFor(s, { objective: `agent ${a} at work`, files: [], awaits: null, session: null });
    await claim(s, `t${a}`);
    s.close();
  }
}

/** CPU seconds used so far by a process and its children (git cat-file, git update-ref). */
function cpuSeconds(pid: number): number {
  const of = (p: number) => {
    const f = readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  };
  let total = of(pid);
  for (const p of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const f = readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1]!.split(" ");
      if (Number(f[1]) === pid) total += of(Number(p));
    } catch {
      /* gone */
    }
  }
  return total;
}

async function firstRender(repo: string, rounds: number, idle = 0): Promise<{ cold: number; warm: number; idleCpu: number | null; buildMs: number }> {
  const dash = await startDashboard(repo, [], { HANDOFF_AGENT: "lead" });
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(120_000);
    await page.goto(dash.link);
    await page.waitForSelector("body[data-first-render-ms]");
    const cold = Number(await page.getAttribute("body", "data-first-render-ms"));
    const warm: number[] = [];
    for (let i = 0; i < rounds; i++) {
      // A new document each time (a changed hash alone would not reload the page).
      await page.goto(`${dash.origin}/?round=${i}#board`);
      await page.waitForSelector("body[data-first-render-ms]");
      warm.push(Number(await page.getAttribute("body", "data-first-render-ms")));
    }
    let idleCpu: number | null = null;
    if (idle) {
      await new Promise((r) => setTimeout(r, 3000));
      const c0 = cpuSeconds(dash.child.pid!);
      const t0 = Date.now();
      await new Promise((r) => setTimeout(r, idle * 1000));
      idleCpu = (cpuSeconds(dash.child.pid!) - c0) / ((Date.now() - t0) / 1000);
    }
    const buildMs = Number(await page.evaluate(async () => (await (await fetch("/api/state")).json()).build_ms));
    return { cold, warm: median(warm), idleCpu, buildMs };
  } finally {
    await browser.close();
    await dash.stop();
  }
}

const empty = tempRepo();
const big = tempRepo();
const t0 = Date.now();
await populate(big);
console.log(`populated ${TASKS} tasks and ${AGENTS} agents (each holding one claim) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
const e = await firstRender(empty, 5);
const b = await firstRender(big, 5, IDLE_S);
console.log(`empty repo: first load through the link (agents view) ${e.cold} ms; board view on reload, median ${fmt(e.warm, 0)} ms`);
console.log(`${TASKS} tasks / ${AGENTS} agents: first load through the link (agents view) ${b.cold} ms (${fmt(b.cold / e.cold)}x empty); board view on reload, median ${fmt(b.warm, 0)} ms (${fmt(b.warm / e.warm)}x empty)`);
console.log(`server-side state build: ${fmt(b.buildMs, 0)} ms at ${TASKS} tasks vs ${fmt(e.buildMs, 0)} ms empty (${fmt(b.buildMs / Math.max(1, e.buildMs))}x)`);
console.log(`idle server CPU over ${IDLE_S} s with the page open: ${fmt(b.idleCpu! * 100, 2)}% of one core (target < 1%)`);
cleanupTemp();
