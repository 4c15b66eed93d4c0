// The soak: N clones of one remote over smart HTTP (git http-backend), A agents in each (one
// process apiece), T tasks, every agent looping claim --next -> done -> sync until none is left.
// Used by test/soak.test.ts (small, in `npm test`) and test/bench/soak.bench.ts (full size).
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { cleanEnv, cli, gitOut, seedTasks, tempDir, tempRepo } from "./repo.ts";
import { cloneOf, serveRoot, startHttp } from "./servers.ts";
import { bundled } from "./bundle.ts";

const AGENT = resolve(import.meta.dirname, "soak-agent.ts");

export interface SoakOptions {
  clones: number;
  agentsPerClone: number;
  tasks: number;
  /** The scripted clock every agent runs on (HANDOFF_NOW). */
  now: string;
  /** Wall-clock bound for the whole loop; agents stop at it. */
  boundMs: number;
  /** How many of the clones (the first ones) keep their coordination refs in a separate store. */
  separate?: number;
}

export interface Step {
  step: "claim" | "sync" | "idle" | "error" | "end";
  id?: string;
  code?: string;
  message?: string;
  during?: string;
  ms?: number;
  pushes?: number;
  lsRemotes?: number;
  fetches?: number;
}

export interface SoakResult {
  wallMs: number;
  /** Claims granted, by agent, in the order they came. */
  grants: { agent: string; clone: number; id: string; ms: number; pushes: number; lsRemotes: number; fetches: number }[];
  steps: { agent: string; clone: number; s: Step }[];
  repos: string[];
  bare: string;
  taskIds: string[];
  /** Requests the remote served, one line each (`GET /soak.git/info/refs?service=...`). */
  requests: string[];
  agents: string[];
  stop(): Promise<void>;
}

function runAgent(repo: string, agent: string, deadline: number, env: NodeJS.ProcessEnv): Promise<Step[]> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [bundled(AGENT), repo, agent, String(deadline)], { env: cleanEnv(env), cwd: resolve(import.meta.dirname, "../..") });
    let out = "";
    let err = "";
    child.stdout.on("data", (b) => (out += b));
    child.stderr.on("data", (b) => (err += b));
    child.on("close", (code) => {
      if (code !== 0) return rej(new Error(`soak agent ${agent} exited ${code}: ${err.slice(-2000)}`));
      res(out.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Step));
    });
  });
}

export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const served = serveRoot();
  const bare = served.bare("soak");
  // The clock is scripted and fixed while the real one, the remote's HTTP Date, runs on: the soak
  // measures contention, not skew, so the repository allows an hour of it.
  const seed = tempRepo();
  writeFileSync(join(seed, ".handoff.yaml"), "max_clock_skew: 1h\n");
  gitOut(seed, "add", ".handoff.yaml");
  gitOut(seed, "commit", "-q", "-m", "policy: the soak's scripted clock");
  gitOut(seed, "push", "-q", bare, "main");
  const log = join(tempDir("handoff-soak-log-"), "requests.log");
  const http = await startHttp(served.root, log);
  const url = http.url("soak");
  const repos = Array.from({ length: o.clones }, () => cloneOf(url));
  for (const r of repos.slice(0, o.separate ?? 0)) if (cli(["store", "--separate"], { cwd: r }).code !== 0) throw new Error("store --separate failed");
  const taskIds = Array.from({ length: o.tasks }, (_, i) => `soak-${String(i).padStart(3, "0")}`);
  // Priorities in three tiers, so the draw among the best few meets unequal weights.
  await seedTasks(repos[0]!, taskIds.map((id, i) => ({ id, priority: i % 3 === 0 ? 1 : 0 })));
  const env = { HANDOFF_NOW: o.now };
  if (cli(["sync"], { cwd: repos[0]!, agent: "lead", env }).code !== 0) throw new Error("the seeding sync failed");
  for (const r of repos.slice(1)) if (cli(["sync"], { cwd: r, agent: "lead", env }).code !== 0) throw new Error("a first sync failed");
  const before = readFileSync(log, "utf8").split("\n").filter(Boolean).length;

  const t0 = Date.now();
  const deadline = t0 + o.boundMs;
  const runs: Promise<{ agent: string; clone: number; steps: Step[] }>[] = [];
  const agents: string[] = [];
  repos.forEach((repo, c) => {
    for (let a = 0; a < o.agentsPerClone; a++) {
      const agent = `agent-${c}-${a}`;
      agents.push(agent);
      runs.push(runAgent(repo, agent, deadline, env).then((steps) => ({ agent, clone: c, steps })));
    }
  });
  // Every agent is waited for, so a failure is reported with the others stopped, not mid-run.
  const settled = await Promise.allSettled(runs);
  const failed = settled.find((x): x is PromiseRejectedResult => x.status === "rejected");
  if (failed) {
    await http.stop();
    throw failed.reason;
  }
  const results = settled.map((x) => (x as PromiseFulfilledResult<{ agent: string; clone: number; steps: Step[] }>).value);
  const wallMs = Date.now() - t0;
  const grants: SoakResult["grants"] = [];
  const steps: SoakResult["steps"] = [];
  for (const r of results) {
    for (const s of r.steps) {
      steps.push({ agent: r.agent, clone: r.clone, s });
      if (s.step === "claim") grants.push({ agent: r.agent, clone: r.clone, id: s.id!, ms: s.ms!, pushes: s.pushes!, lsRemotes: s.lsRemotes!, fetches: s.fetches! });
    }
  }
  const requests = readFileSync(log, "utf8").split("\n").filter(Boolean).slice(before);
  return { wallMs, grants, steps, repos, bare, taskIds, requests, agents, stop: () => http.stop() };
}

/** Quantile of `xs` (0..1), nearest rank. */
export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? 0;
}

/** Figures over a soak: what the test asserts and the bench reports. */
export function soakFigures(r: SoakResult, clones: number) {
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const all = r.steps.map((x) => x.s);
  const grants = r.grants.length;
  const perClone = Array.from({ length: clones }, (_, c) => r.grants.filter((g) => g.clone === c).length);
  return {
    grants,
    grantsPerSecond: grants / (r.wallMs / 1000),
    claimP50: quantile(r.grants.map((g) => g.ms), 0.5),
    claimP99: quantile(r.grants.map((g) => g.ms), 0.99),
    claimPushesPerGrant: sum(r.grants.map((g) => g.pushes)) / grants,
    pushesPerGrant: sum(all.map((s) => s.pushes ?? 0)) / grants,
    lsRemotesPerGrant: sum(all.map((s) => s.lsRemotes ?? 0)) / grants,
    fetchesPerGrant: sum(all.map((s) => s.fetches ?? 0)) / grants,
    /** Push connections the remote served (each `git push` asks for the receive-pack advertisement once). */
    // git's pushes open with the advertisement; git-handoff's own are one POST each (http-remote.ts).
    remotePushRequests: r.requests.filter((l) => (l.startsWith("GET ") && l.includes("service=git-receive-pack") && !l.endsWith("(git-handoff)")) || (l.includes("/git-receive-pack ") && l.endsWith("(git-handoff)"))).length,
    perClone,
    errors: all.filter((s) => s.step === "error"),
    /** Errors other than a bounded remote operation giving up on a loaded machine. */
    hardErrors: all.filter((s) => s.step === "error" && !/^(lost_race|remote_timeout)$/.test(s.code ?? "")),
    maxClaimPushes: Math.max(0, ...r.grants.map((g) => g.pushes)),
  };
}
