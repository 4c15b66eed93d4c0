// A verification that may outlast the caller's patience. An MCP client gives up on a request after
// about 60 s; a test suite often takes longer. So a front end can start the verification as a
// run: a runner (a detached process, or the server itself) calls doneWithVerification, the same
// function `done --verify` calls, and the verdict reaches the task ref by its compare-and-swap as
// always. The run file only says how the run stands, for the agent that started it: running,
// recorded (the task as the verdict left it) or refused (the refusal, e.g. the task was taken
// meanwhile, or the command is not approved in this clone).
//
// Run files are local and disposable (.git/handoff/verification-runs/<task>.json): the shared state
// is the task ref; a lost run file loses only the notice, never the verdict.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { lstatSync } from "node:fs";
import { dirname, join } from "node:path";
import { HandoffError, type Refusal } from "../core/errors.ts";
import { validateAgentId, validateTaskId } from "../core/ids.ts";
import type { Task } from "../core/task.ts";
import { ownFolder, readTextNoFollow, replaceFile } from "../git/safe-file.ts";
import { doneWithVerification } from "./review-actions.ts";
import type { Store } from "./store.ts";
import { renew } from "./task-actions.ts";
import { loadTask } from "./task-store.ts";

/** What a runner needs to verify the task as the agent would have in the foreground. */
export interface VerificationJob {
  run_id: string;
  task: string;
  agent: string;
  /** The folder the agent works in: the verification runs in its worktree. */
  cwd: string;
  commit?: string;
  note?: string;
}

export interface VerificationRun extends VerificationJob {
  /** `lost`: the runner ended without writing a verdict (killed, machine restarted). */
  state: "running" | "recorded" | "refused" | "lost";
  pid: number | null;
  started_at: string;
  ended_at?: string;
  /** recorded: the task as the verdict left it (in review, or kept with its verification). */
  result?: Task;
  /** refused: why nothing was recorded. */
  error?: Refusal;
  /** The verdict was returned to the agent once; later waits read the task itself. */
  reported?: boolean;
}

/** Starts a runner for the job and returns its process id. */
export type Runner = (job: VerificationJob) => number;

function runsDir(store: Store): string {
  return join(store.repo.commonDir, "handoff", "verification-runs");
}

function runPath(store: Store, id: string): string {
  return join(runsDir(store), `${validateTaskId(id)}.json`);
}

function write(path: string, run: VerificationRun): void {
  ownFolder(dirname(path));
  replaceFile(path, JSON.stringify(run, null, 2)); // atomic: a reader sees the old run or the new one, never half of one
}

/** A run file without a pid older than this lost its starter between writing it and spawning. */
const PID_GRACE_MS = 60_000;

function alive(pid: number | null, path: string): boolean {
  if (pid === null) {
    // Just started: the pid follows in a moment (file age, not the store's clock, which may be scripted).
    try {
      return Date.now() - lstatSync(path).mtimeMs < PID_GRACE_MS;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The last run for a task in this clone, or null. A runner gone without a verdict reads as `lost`. */
export function readVerificationRun(store: Store, id: string): VerificationRun | null {
  let run: VerificationRun;
  try {
    run = JSON.parse(readTextNoFollow(runPath(store, id)) ?? "null") as VerificationRun;
  } catch {
    return null;
  }
  if (!run) return null;
  if (run.state === "running" && !alive(run.pid, runPath(store, id))) {
    // Read once more: the runner may have written its verdict just before exiting.
    try {
      run = JSON.parse(readTextNoFollow(runPath(store, id)) ?? "null") as VerificationRun;
    } catch {
      return null;
    }
    if (!run) return null;
    if (run.state === "running") return { ...run, state: "lost" };
  }
  return run;
}

/**
 * Starts verifying `id` as the store's agent, or returns the run of that agent already under way
 * (a second complete_task while the first still runs starts nothing new).
 */
export function startVerificationRun(store: Store, id: string, o: { commit?: string; note?: string }, runner: Runner): VerificationRun {
  const existing = readVerificationRun(store, id);
  if (existing?.state === "running" && existing.agent === store.actor.agent) return existing;
  const job: VerificationJob = {
    run_id: randomBytes(8).toString("hex"),
    task: validateTaskId(id),
    agent: store.actor.agent,
    cwd: store.cwd,
    ...(o.commit !== undefined ? { commit: o.commit } : {}),
    ...(o.note !== undefined ? { note: o.note } : {}),
  };
  const path = runPath(store, id);
  const run: VerificationRun = { ...job, state: "running", pid: null, started_at: store.now().toISOString() };
  write(path, run); // before the runner starts, so its verdict always has a run to land on
  let pid: number;
  try {
    pid = runner(job);
  } catch (e) {
    const error: Refusal = e instanceof HandoffError ? e.refusal : { code: "internal", message: `could not start the verification runner: ${(e as Error)?.message ?? String(e)}` };
    write(path, { ...run, state: "refused", error, ended_at: store.now().toISOString() });
    throw new HandoffError(error);
  }
  // The runner needs far longer than this read and write to reach its verdict (a process start,
  // a store, a command): the pid lands first, and the state check keeps a verdict that came sooner.
  const now = readVerificationRun(store, id);
  if (now?.run_id === job.run_id && now.state === "running" && now.pid === null) write(path, { ...now, pid });
  return { ...run, pid };
}

/** What a runner does: verify and record exactly as `done --verify`, then write the verdict. */
export async function executeVerificationJob(store: Store, job: VerificationJob): Promise<VerificationRun | null> {
  let outcome: Pick<VerificationRun, "state" | "result" | "error">;
  const renewing = await keepClaimAlive(store, job);
  try {
    const result = await doneWithVerification(store, job.task, {
      ...(job.commit !== undefined ? { commit: job.commit } : {}),
      ...(job.note !== undefined ? { note: job.note } : {}),
    });
    outcome = { state: "recorded", result };
  } catch (e) {
    const error: Refusal = e instanceof HandoffError ? e.refusal : { code: "internal", message: `verification runner: ${(e as Error)?.message ?? String(e)}` };
    outcome = { state: "refused", error };
  } finally {
    clearInterval(renewing);
  }
  const path = runPath(store, job.task);
  const current = readVerificationRun(store, job.task);
  if (current && current.run_id !== job.run_id) return null; // superseded by a newer run: its verdict is the one awaited
  const done: VerificationRun = { ...(current ?? { ...job, pid: process.pid, started_at: store.now().toISOString() }), ...outcome, ended_at: store.now().toISOString() };
  write(path, done);
  return done;
}

/**
 * The agent is not there to renew its claim while the runner verifies: the runner renews it at a
 * third of its length (as a worker does), so a long verification does not lose the task to
 * expiry. Only a claim of the job's agent is renewed; a renewal that fails is left to the verdict's
 * own compare-and-swap to report.
 */
async function keepClaimAlive(store: Store, job: VerificationJob): Promise<NodeJS.Timeout | undefined> {
  const { task } = await loadTask(store, job.task).catch(() => ({ task: null }));
  if (!task?.claim || task.claim.agent !== job.agent) return undefined;
  const every = Math.max(10_000, Math.floor(task.claim.ttl_ms / 3));
  const timer = setInterval(() => void renew(store, job.task).catch(() => {}), every);
  timer.unref();
  return timer;
}

/** The verdict was handed to the agent: later waits on the task read the task ref alone. */
export function markRunReported(store: Store, run: VerificationRun): void {
  const current = readVerificationRun(store, run.task);
  if (current?.run_id === run.run_id && current.state !== "running") write(runPath(store, run.task), { ...current, reported: true });
}

/** Runs the job in a detached process: `node <entry...> --verify-job <json>`; it outlives its parent. */
export function detachedRunner(entry: string[], env: NodeJS.ProcessEnv = process.env): Runner {
  return (job) => {
    const childEnv = { ...env };
    delete childEnv.HANDOFF_AGENT; // the job names the agent
    const child = spawn(process.execPath, [...entry, "--verify-job", JSON.stringify(job)], { cwd: job.cwd, env: childEnv, detached: true, stdio: "ignore" });
    child.unref();
    if (child.pid === undefined) throw new HandoffError({ code: "internal", message: "could not start the verification runner" });
    return child.pid;
  };
}

/**
 * Runs the job inside this process (tests, or when no runner entry is known): it ends with the
 * process, and it uses the caller's store, so it suits verifications shorter than the store's life.
 */
export function inProcessRunner(store: Store): Runner {
  return (job) => {
    validateAgentId(job.agent);
    void executeVerificationJob(store, job);
    return process.pid;
  };
}
