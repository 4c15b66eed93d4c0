// Test support for handing tasks between machines: one remote over smart HTTP, clones that each
// declare a machine, workers and waiters as real background processes.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, cleanupTemp, cliStart, gitOut, tempDir, tempRepo } from "./repo.ts";
import { cloneOf, serveRoot, startHttp, type GitServer } from "./servers.ts";

export interface Machines {
  bare: string;
  server: GitServer;
  /** A fresh clone declaring `machine`. */
  clone(machine: string): string;
}

/**
 * One remote over smart HTTP for a whole test file: started before its first test, stopped (and
 * the file's temp folders removed) after its last. The machines are reached as `net.clone(...)`,
 * `net.bare`, once the file's tests run.
 */
export function remoteForFile(t: { before(fn: () => unknown): void; after(fn: () => unknown): void }, name: string, requestLog?: string): Machines {
  let net: Machines | null = null;
  t.before(async () => {
    net = await httpRemote(name, requestLog);
  });
  t.after(async () => {
    await net?.server.stop();
    cleanupTemp();
  });
  return new Proxy({} as Machines, {
    get(_, key) {
      if (!net) throw new Error(`the remote ${name} is reached only from inside a test`);
      return net[key as keyof Machines];
    },
  });
}

export async function httpRemote(name: string, requestLog?: string): Promise<Machines> {
  const served = serveRoot();
  const server = await startHttp(served.root, requestLog);
  const bare = served.bare(name);
  gitOut(tempRepo(), "push", "-q", bare, "main");
  return {
    bare,
    server,
    clone(machine: string) {
      const dir = cloneOf(server.url(name));
      gitOut(dir, "config", "handoff.machine", machine);
      return dir;
    },
  };
}

/** Runs a command with `input` on stdin and returns its trimmed stdout (git plumbing in tests). */
export function sh(cmd: string, args: string[], cwd: string, input: string): string {
  const r = spawnSync(cmd, args, { cwd, input, encoding: "utf8", env: cleanEnv() });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}

/** An executable shell script in a temp folder (the worker's --exec). */
export function script(body: string): string {
  const path = join(tempDir("handoff-job-"), "job.sh");
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

export interface Proc {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or 128 + signal number style: null code -> -1). */
  exited: Promise<number>;
}

/** `git-handoff ARGS` as a background process. */
export function start(args: string[], o: { cwd: string; agent?: string; env?: NodeJS.ProcessEnv }): Proc {
  const how = cliStart(args, o);
  const child = spawn(process.execPath, how.argv, { cwd: o.cwd, env: how.env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (b) => (out += b));
  child.stderr!.on("data", (b) => (err += b));
  const exited = new Promise<number>((res) => child.on("close", (code) => res(code ?? -1)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/**
 * The --poll of workers in tests where how often a worker looks is not the subject: each look runs
 * git against the test remote (an http-backend there too), so an idle worker polling every 100 ms took
 * about 0.35 CPU-seconds a second here, at 300 ms a third of that. Files that count polls or race
 * a worker against a short --ttl keep their own 100 ms.
 */
export const POLL = "300ms";

/** A worker that takes one task (`--once`), polling every POLL, running `job` for it. */
export function onceWorker(cwd: string, job: string, agent = "codex@m2"): Proc {
  return start(["worker", "--exec", job, "--once", "--poll", POLL], { cwd, agent });
}

/**
 * Polls `check` until it holds; fails after a generous deadline (never a timing assumption). A
 * check that runs git (a read of the remote) waits ten times as long as it took before the next
 * look, so the polling costs at most a tenth of a core; one that only reads output looks every 50 ms.
 */
export async function until(check: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const t0 = Date.now();
    if (check()) return;
    await new Promise((r) => setTimeout(r, Math.max(50, Math.min(1000, 10 * (Date.now() - t0)))));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Stops a background process (SIGINT first, as a user would), and waits for it. */
export async function stop(p: Proc, signal: NodeJS.Signals = "SIGINT"): Promise<number> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill(signal);
  const timer = setTimeout(() => p.child.kill("SIGKILL"), 15_000);
  const code = await p.exited;
  clearTimeout(timer);
  return code;
}

/** The task as the bare remote holds it. */
export function remoteTask(bare: string, id: string): any {
  return JSON.parse(gitOut(bare, "show", `refs/handoff/tasks/${id}:task.json`));
}

/**
 * Finishes task `id` as its holder `agent` would, with whatever result record it likes (a holder
 * may send any output, files and branch), through the same transaction a worker uses: the task's
 * done/failed step names this results commit. Pushed when the clone has a sync remote.
 */
export async function finishAs(repo: string, agent: string, record: Record<string, unknown>, files: Record<string, string> = {}): Promise<void> {
  const { openSyncedStore: openStore } = await import("../../src/sync/open.ts");
  const { finishWithResults } = await import("../../src/work/complete.ts");
  const store = await openStore({ cwd: repo, agent, env: cleanEnv(), push: true });
  try {
    await finishWithResults(store, record as never, new Map(Object.entries(files).map(([n, t]) => [n, Buffer.from(t)])), { exclusive: true });
  } finally {
    store.close();
  }
}

/** Creates task `id` with input files as `wait --file` does (task and inputs in one push). */
export async function handOver(repo: string, agent: string, id: string, files: Record<string, string>): Promise<void> {
  const { openSyncedStore: openStore } = await import("../../src/sync/open.ts");
  const { createHandover } = await import("../../src/work/handover.ts");
  const store = await openStore({ cwd: repo, agent, env: cleanEnv(), push: true });
  try {
    const inputs = { context: new Map<string, Buffer>(), files: new Map(Object.entries(files).map(([n, t]) => [n, Buffer.from(t)])) };
    await createHandover(store, { objective: `work on ${id}`, priority: 0, to: null, inputs, id });
  } finally {
    store.close();
  }
}
