// One unit of the session loop: its worktree and branch, the agent session that holds its tasks,
// the agent process (detached, so it outlives a crashed loop, its pid written before anything
// else can fail), and the cleanup that never removes work nobody has.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { classifyAgent } from "../core/agent.ts";
import { dependenciesOf } from "../core/dependency-graph.ts";
import { HandoffError } from "../core/errors.ts";
import { MAX_UNIT_NOTE, type LoopRecord, type LoopUnit } from "../core/loop-record.ts";
import { settle } from "../core/task-ops.ts";
import type { Task } from "../core/task.ts";
import { processAlive, processStart } from "../git/process-alive.ts";
import { addBranchWorktree, changedPaths, deleteBranch, dropWorktree } from "../git/branch-integrate.ts";
import { endSessionFor, loadAgent, startSessionFor } from "../store/agent-store.ts";
import { changeLoop } from "../store/loop-store.ts";
import type { Store } from "../store/store.ts";
import { claimReporting, release, renew } from "../store/task-actions.ts";
import { listTasks } from "../store/task-store.ts";
import { openSyncedStore } from "../sync/open.ts";
import { unitPrompt } from "./loop-agent.ts";

export const HOST = hostname();

/** Whether a process with this pid (and start time, when known) runs on this machine. */
export function pidAlive(pid: number | null, start: string | null = null): boolean {
  return processAlive(pid, start);
}

/** Whether the unit's agent still runs: its pid on this host, or, on another host, a fresh heartbeat. */
export async function agentAlive(store: Store, u: LoopUnit): Promise<boolean> {
  if (u.host === HOST) return u.pid ? pidAlive(u.pid, u.pid_start) : pidAlive(recordedPid(u));
  if (!u.host) return false;
  const a = await loadAgent(store, u.agent);
  return !!a && classifyAgent(a.record, store.now(), store.config) === "active";
}

/**
 * A new folder for a unit's worktree, agent log and pid file, made here and now so it is this
 * unit's alone (another repository's loop may have left one of the same name).
 */
function freshHome(loopId: string, unitId: string): string {
  for (let n = 1; ; n++) {
    const dir = join(tmpdir(), `handoff-loop-${loopId}-${unitId}${n > 1 ? `-${n}` : ""}`);
    try {
      mkdirSync(dir);
      return dir;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST" || n >= 1000) throw e;
    }
  }
}

/** The agent's pid: from the record, else from the pid file written right after the spawn. */
export function recordedPid(u: LoopUnit): number | null {
  if (u.pid) return u.pid;
  if (!u.worktree) return null;
  try {
    const n = Number(readFileSync(join(u.worktree, "..", "agent.pid"), "utf8").trim());
    return Number.isInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

export function updateUnit(store: Store, id: string, patch: (u: LoopUnit) => LoopUnit, note: string): Promise<LoopRecord | null> {
  return changeLoop(store, (cur) => {
    if (!cur) return null;
    const i = cur.units.findIndex((u) => u.id === id);
    if (i < 0) return null;
    const next = patch(cur.units[i]!);
    // Notes quote paths and command output: bounded here, so the record always reads back.
    if (next.note && next.note.length > MAX_UNIT_NOTE) next.note = next.note.slice(0, MAX_UNIT_NOTE - 1) + "…";
    cur.units[i] = next;
    return { record: cur, note };
  });
}

/** The unit's agent, acting in `cwd` (its worktree while it has one). */
export function unitStore(store: Store, u: LoopUnit, cwd = store.cwd): Promise<Store> {
  return openSyncedStore({ cwd, agent: u.agent, env: process.env });
}

async function settledTasks(store: Store): Promise<Map<string, Task>> {
  const { tasks } = await listTasks(store);
  const actor = store.actor;
  return new Map(tasks.map((t) => [t.id, settle(t, { actor, now: store.now() }).record]));
}

/** The unit's tasks that are not done or in review, with their state. */
export async function openTasks(store: Store, u: LoopUnit): Promise<{ id: string; status: string; holder: string | null }[]> {
  const byId = await settledTasks(store);
  return u.tasks
    .map((id) => byId.get(id))
    .filter((t) => !t || (t.status !== "done" && t.status !== "review"))
    .map((t, i) => ({ id: t?.id ?? u.tasks[i]!, status: t?.status ?? "missing", holder: t?.claim?.agent ?? null }));
}

/** Gives back every claim the unit's agent still holds, and ends its session. */
export async function releaseUnit(store: Store, u: LoopUnit): Promise<string[]> {
  const s = await unitStore(store, u);
  const released: string[] = [];
  try {
    const byId = await settledTasks(s);
    for (const id of u.tasks) {
      const t = byId.get(id);
      if (t?.status === "claimed" && t.claim?.agent === u.agent) {
        await release(s, id);
        released.push(id);
      }
    }
    await endSessionFor(s).catch(() => {});
  } finally {
    s.close();
  }
  return released;
}

/** Renews the unit's live claims (the loop does it at a third of the TTL, as the worker does). */
export async function renewUnit(store: Store, u: LoopUnit): Promise<void> {
  const s = await unitStore(store, u);
  try {
    const byId = await settledTasks(s);
    for (const id of u.tasks) if (byId.get(id)?.claim?.agent === u.agent) await renew(s, id).catch(() => {});
  } finally {
    s.close();
  }
}

export interface Launch {
  child: ChildProcess;
  exited: Promise<number | null>;
}

/**
 * Starts (or restarts) a unit: records its branch and worktree first, so a crash from here on
 * leaves nothing the record does not name; then the worktree at the integration tip, the agent's
 * session and its claims (a restart releases the old claims before it claims again), then the
 * agent. Returns null when a claim was refused (the unit is then `refused`, its claims released).
 */
export async function launchUnit(store: Store, rec: LoopRecord, u: LoopUnit, command: string, tip: string, log: (l: string) => void): Promise<Launch | null> {
  // A restart reuses the unit's own folder (the record names it); a first start makes one.
  const home = u.worktree ? dirname(u.worktree) : freshHome(rec.id, u.id);
  const worktree = join(home, "worktree");
  const branch = `loop/${rec.id}/${u.id}`;
  const base = u.base ?? tip;
  await updateUnit(store, u.id, (x) => ({ ...x, phase: "starting", branch, worktree, base, host: HOST, pid: null, pid_start: null, started_at: x.started_at ?? store.now().toISOString() }), `${u.id} starting`);
  mkdirSync(home, { recursive: true });
  rmSync(join(home, "agent.pid"), { force: true }); // a pid file names only the agent started last
  if (!existsSync(join(worktree, ".git"))) await addBranchWorktree(store.cwd, worktree, branch, base);
  const started = { ...u, branch, worktree, base };
  const s = await unitStore(store, started, worktree);
  let todo: Task[];
  try {
    const byId = await settledTasks(s);
    todo = u.tasks.map((id) => byId.get(id)).filter((t): t is Task => !!t && t.status !== "done" && t.status !== "review");
    await startSessionFor(s, { objective: `loop ${rec.id} unit ${u.id}: ${u.tasks.join(", ")}`, files: u.scope, awaits: null, session: null, capacity: Math.max(1, todo.length) });
    for (const t of todo) {
      // Restarted only after the claims of the agent that died are given back.
      if (t.status === "claimed" && t.claim?.agent === u.agent) await release(s, t.id);
    }
    for (const t of todo) {
      // A dependency inside the unit is done by the same agent first, in the same worktree.
      const force = dependenciesOf(t).some((d) => u.tasks.includes(d));
      await claimReporting(s, t.id, { force });
    }
  } catch (e) {
    if (!(e instanceof HandoffError)) throw e;
    s.close();
    const released = await releaseUnit(store, started);
    // Nothing was done in it yet: the worktree and branch go (unless someone wrote there meanwhile).
    const kept = await cleanupUnit(store, started, { dropBranch: true });
    await updateUnit(store, u.id, (x) => ({ ...x, phase: "refused", kept: !!kept, finished_at: store.now().toISOString(), note: [`could not claim its tasks: ${e.message}${released.length ? ` (released ${released.join(", ")})` : ""}`, kept].filter(Boolean).join("; ") }), `${u.id} refused`);
    log(`${u.id}: refused: ${e.message}`);
    return null;
  }
  s.close();
  const taskFile = join(home, "tasks.json");
  // Task text came from other agents: an agent command that shows it to a model should fence it.
  writeFileSync(taskFile, JSON.stringify({ loop: rec.id, unit: u.id, untrusted: true, tasks: todo.map((t) => ({ id: t.id, objective: t.objective, scope: t.scope, after: t.after ?? [] })) }, null, 2) + "\n");
  const promptFile = join(home, "prompt.txt");
  writeFileSync(promptFile, unitPrompt({ agent: u.agent, loop: rec.id, unit: u.id, branch, tasks: todo }));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HANDOFF_AGENT: u.agent,
    HANDOFF_LOOP_ID: rec.id,
    HANDOFF_LOOP_UNIT: u.id,
    HANDOFF_LOOP_TASKS: todo.map((t) => t.id).join(" "),
    HANDOFF_TASK_FILE: taskFile,
    HANDOFF_LOOP_PROMPT_FILE: promptFile,
    HANDOFF_INTEGRATION_BRANCH: rec.integration,
  };
  for (const k of ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX"]) delete env[k];
  // Output to a file, not a pipe: the agent must not die of SIGPIPE when the loop does.
  const out = openSync(join(home, "agent.log"), "a");
  const child = spawn("/bin/sh", ["-c", command], { cwd: worktree, env, stdio: ["ignore", out, out], detached: true });
  closeSync(out);
  if (child.pid) writeFileSync(join(home, "agent.pid"), `${child.pid}\n`);
  const exited = new Promise<number | null>((res) => {
    child.on("error", () => res(null));
    child.on("close", (code) => res(code));
  });
  child.unref();
  const pidStart = child.pid ? processStart(child.pid) : null;
  await updateUnit(store, u.id, (x) => ({ ...x, phase: "running", pid: child.pid ?? null, pid_start: pidStart, starts: x.starts + 1 }), `${u.id} running (pid ${child.pid})`);
  log(`${u.id}: agent ${u.agent} started in ${worktree} (pid ${child.pid}): ${todo.map((t) => t.id).join(", ")}`);
  return { child, exited };
}

/** Stops a unit's agent process group: TERM, then KILL after a grace; resolves once it is gone. */
export async function stopAgent(pid: number | null, start: string | null, graceMs = 3000): Promise<void> {
  if (!pid || !pidAlive(pid, start)) return;
  const kill = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      try {
        process.kill(pid, sig);
      } catch {
        /* gone */
      }
    }
  };
  kill("SIGTERM");
  const t0 = Date.now();
  while (pidAlive(pid, start) && Date.now() - t0 < graceMs) await new Promise((r) => setTimeout(r, 50));
  if (pidAlive(pid, start)) kill("SIGKILL");
  while (pidAlive(pid, start) && Date.now() - t0 < graceMs + 5000) await new Promise((r) => setTimeout(r, 50));
}

/**
 * Removes the unit's worktree (and, when asked, its branch) unless someone would lose something:
 * a worktree with uncommitted changes, or one a live agent holds, is kept and the reason returned.
 */
export async function cleanupUnit(store: Store, u: LoopUnit, opts: { dropBranch: boolean }): Promise<string | null> {
  if (u.worktree && existsSync(u.worktree)) {
    if (await agentAlive(store, u)) return `kept ${u.worktree}: a live agent holds it (pid ${u.pid})`;
    const dirty = await changedPaths(u.worktree);
    if (dirty === null) return `kept ${u.worktree}: git cannot read it`;
    if (dirty.length) return `kept ${u.worktree}: it has uncommitted changes (${dirty.slice(0, 5).join(", ")}${dirty.length > 5 ? ", ..." : ""})`;
    await dropWorktree(store.cwd, u.worktree);
  }
  if (u.worktree) rmSync(join(u.worktree, ".."), { recursive: true, force: true });
  if (opts.dropBranch && u.branch) await deleteBranch(store.cwd, u.branch);
  return null;
}
