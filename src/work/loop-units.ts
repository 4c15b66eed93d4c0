// One unit of the session loop: its worktree and branch, the agent session that holds its tasks,
// the agent process (detached, so it outlives a crashed loop, its pid written before anything
// else can fail), and the cleanup that never removes work nobody has.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { classifyAgent } from "../core/agent.ts";
import { dependenciesOf } from "../core/dependency-graph.ts";
import { HandoffError } from "../core/errors.ts";
import { refComponentProblem } from "../core/ids.ts";
import { MAX_UNIT_NOTE, type LoopRecord, type LoopUnit } from "../core/loop-record.ts";
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

/**
 * Whether the unit's agent still runs: on this host, the agent this clone started for it (its pid
 * file); on another host, a fresh heartbeat.
 */
export async function agentAlive(store: Store, loopId: string, u: LoopUnit): Promise<boolean> {
  if (u.host === HOST) {
    const a = ownAgent(store, loopId, u);
    return !!a && pidAlive(a.pid, a.start);
  }
  if (!u.host) return false;
  const a = await loadAgent(store, u.agent);
  return !!a && classifyAgent(a.record, store.now(), store.config) === "active";
}

/** The file in a unit's folder that says which repository's loop and unit made it. */
const HOME_MARK = "handoff-loop";

function homeMark(store: Store, loopId: string, unitId: string): string {
  return `${store.repo.commonDir}\n${loopId} ${unitId}\n`;
}

/**
 * A new folder for a unit's worktree, agent log and pid file, made here and now so it is this
 * unit's alone (another repository's loop may have left one of the same name). Marked as this
 * repository's, so only a folder the loop made here is ever reused or removed (unitHome).
 */
export function freshHome(store: Store, loopId: string, unitId: string): string {
  // Both names come from the record: each must be one plain name, so the folder lands in tmpdir.
  for (const name of [loopId, unitId]) {
    const problem = refComponentProblem(name);
    if (problem) throw new Error(`not a loop or unit id: ${JSON.stringify(name.slice(0, 80))} ${problem}`);
  }
  for (let n = 1; ; n++) {
    const dir = join(tmpdir(), `handoff-loop-${loopId}-${unitId}${n > 1 ? `-${n}` : ""}`);
    if (dirname(resolve(dir)) !== resolve(tmpdir())) throw new Error(`${dir} is not directly in ${tmpdir()}`);
    try {
      mkdirSync(dir);
      writeFileSync(join(dir, HOME_MARK), homeMark(store, loopId, unitId));
      return dir;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST" || n >= 1000) throw e;
    }
  }
}

/**
 * The unit's folder, when the record names one this clone's loop made for this loop and unit:
 * `handoff-loop-<loop>-<unit>[-n]/worktree`, a real directory (not a link) of this user, marked
 * by freshHome as this repository's. The record is shared state anyone with push access can write,
 * so its paths are never acted on otherwise: null, and the caller leaves the path alone.
 */
export function unitHome(store: Store, loopId: string, u: LoopUnit): string | null {
  const wt = u.worktree;
  if (!wt || !isAbsolute(wt) || resolve(wt) !== wt || basename(wt) !== "worktree") return null;
  const home = dirname(wt);
  const prefix = `handoff-loop-${loopId}-${u.id}`;
  const name = basename(home);
  if (!name.startsWith(prefix) || !/^(-\d{1,4})?$/.test(name.slice(prefix.length))) return null;
  try {
    const st = lstatSync(home);
    if (!st.isDirectory() || st.isSymbolicLink() || (process.getuid && st.uid !== process.getuid())) return null;
    const mark = join(home, HOME_MARK);
    if (!lstatSync(mark).isFile() || readFileSync(mark, "utf8") !== homeMark(store, loopId, u.id)) return null;
  } catch {
    return null;
  }
  return home;
}

/**
 * The agent this clone started for the unit, from the pid file in the unit's own folder (written
 * right after the spawn, with the process's start time): never the record's pid, which anyone
 * with push access can set to any process of yours.
 */
export function ownAgent(store: Store, loopId: string, u: LoopUnit): { pid: number; start: string | null } | null {
  const home = unitHome(store, loopId, u);
  if (!home) return null;
  try {
    const [pid, start] = readFileSync(join(home, "agent.pid"), "utf8").trim().split(" ");
    const n = Number(pid);
    return Number.isInteger(n) && n > 0 ? { pid: n, start: start || null } : null;
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

/**
 * Every task as the views settle it (listTasks: another agent's claim inside the takeover grace is
 * still its own; settling again on the bare clock dropped it), by id.
 */
async function settledTasks(store: Store): Promise<Map<string, Task>> {
  const { tasks } = await listTasks(store);
  return new Map(tasks.map((t) => [t.id, t]));
}

/** The unit's tasks that are not done or in review, with their state. */
export async function openTasks(store: Store, u: LoopUnit): Promise<{ id: string; status: string; holder: string | null }[]> {
  const byId = await settledTasks(store);
  // Each id with its task first: a missing one keeps its own id, whatever was dropped before it.
  return u.tasks
    .map((id) => ({ id, t: byId.get(id) }))
    .filter(({ t }) => !t || (t.status !== "done" && t.status !== "review"))
    .map(({ id, t }) => ({ id, status: t?.status ?? "missing", holder: t?.claim?.agent ?? null }));
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
  /** The child's start time, as its pid file has it. */
  start: string | null;
}

/**
 * Starts (or restarts) a unit: records its branch and worktree first, so a crash from here on
 * leaves nothing the record does not name; then the worktree at the integration tip, the agent's
 * session and its claims (a restart releases the old claims before it claims again), then the
 * agent. Returns null when a claim was refused (the unit is then `refused`, its claims released).
 */
export async function launchUnit(store: Store, rec: LoopRecord, u: LoopUnit, command: string, tip: string, log: (l: string) => void): Promise<Launch | null> {
  // A restart reuses the unit's own folder (the record names it); a first start makes one.
  const home = unitHome(store, rec.id, u) ?? freshHome(store, rec.id, u.id);
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
    const kept = await cleanupUnit(store, rec.id, started, { dropBranch: true });
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
  const pidStart = child.pid ? processStart(child.pid) : null;
  if (child.pid) writeFileSync(join(home, "agent.pid"), `${child.pid} ${pidStart ?? ""}\n`);
  const exited = new Promise<number | null>((res) => {
    child.on("error", () => res(null));
    child.on("close", (code) => res(code));
  });
  child.unref();
  await updateUnit(store, u.id, (x) => ({ ...x, phase: "running", pid: child.pid ?? null, pid_start: pidStart, starts: x.starts + 1 }), `${u.id} running (pid ${child.pid})`);
  log(`${u.id}: agent ${u.agent} started in ${worktree} (pid ${child.pid}): ${todo.map((t) => t.id).join(", ")}`);
  return { child, exited, start: pidStart };
}

/**
 * Stops an agent this clone started (its process group): TERM, then KILL after a grace; resolves
 * once it is gone. Only a process whose start time was recorded and is still the live one's is
 * signalled: without it the pid may be anyone's now. Returns why nothing was signalled, or null.
 */
export async function stopAgent(agent: { pid: number | null | undefined; start: string | null } | null, graceMs = 3000): Promise<string | null> {
  const pid = agent?.pid;
  if (!pid) return null;
  if (!agent.start) return `pid ${pid} not signalled: its start time was not recorded`;
  const start = agent.start;
  if (!pidAlive(pid, start) || processStart(pid) !== start) return null;
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
  return null;
}

/**
 * Removes the unit's worktree (and, when asked, its branch) unless someone would lose something:
 * a worktree with uncommitted changes, or one a live agent holds, is kept and the reason returned.
 * Only the folder and branch the loop makes for this unit are touched (unitHome, `loop/<loop>/<unit>`):
 * any other path or branch the record names is left alone and said so.
 */
export async function cleanupUnit(store: Store, loopId: string, u: LoopUnit, opts: { dropBranch: boolean; keepFolder?: boolean }): Promise<string | null> {
  const own = u.branch === `loop/${loopId}/${u.id}`;
  const home = unitHome(store, loopId, u);
  if (u.worktree && !home) return `left ${u.worktree} alone: it is not a folder this loop made here`;
  if (u.worktree && existsSync(u.worktree)) {
    if (await agentAlive(store, loopId, u)) return `kept ${u.worktree}: a live agent holds it (pid ${u.pid})`;
    const dirty = await changedPaths(u.worktree);
    if (dirty === null) return `kept ${u.worktree}: git cannot read it`;
    if (dirty.length) return `kept ${u.worktree}: it has uncommitted changes (${dirty.slice(0, 5).join(", ")}${dirty.length > 5 ? ", ..." : ""})`;
    await dropWorktree(store.cwd, u.worktree);
  }
  if (home && !opts.keepFolder) rmSync(home, { recursive: true, force: true });
  if (opts.dropBranch && u.branch && own) await deleteBranch(store.cwd, u.branch);
  return null;
}
