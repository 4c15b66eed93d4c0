// The session loop: plans ready work into units, runs one agent per unit in its own worktree,
// integrates each finished unit in plan order, and cleans up. Its state is the record at
// refs/handoff/loop, re-read every round, so a loop killed at any point resumes where it was:
// a live agent is watched, a dead one restarted only after its claims are given back, a merged
// unit never runs again, and every worktree it made is named in the record.
import { existsSync } from "node:fs";
import { HandoffError, fail } from "../core/errors.ts";
import { branchNameProblem, canStart, isLoopActive, isTerminal, mayMerge, unitAgent, type LoopRecord, type LoopUnit, type MergeStrategy } from "../core/loop-record.ts";
import { planLoop } from "../core/loop-plan.ts";
import { branchTip, isAncestor } from "../git/branch-integrate.ts";
import { processStart } from "../git/process-alive.ts";
import { changeLoop, loadLoop, loopStartedHere, markLoopStartedHere, ownLoopProblem } from "../store/loop-store.ts";
import type { Store } from "../store/store.ts";
import { listTasks } from "../store/task-store.ts";
import { pause } from "../sync/follow-ref.ts";
import { integrateUnit } from "./loop-merge.ts";
import { failUnit } from "./loop-failed-unit.ts";
import { agentAlive, cleanupUnit, HOST, launchUnit, openTasks, ownAgent, pidAlive, releaseUnit, renewUnit, stopAgent, updateUnit, type Launch } from "./loop-units.ts";

export interface LoopRunOptions {
  command: string;
  /** null: the configured or current branch (a resumed loop keeps its own). */
  into: string | null;
  maxWorktrees: number;
  strategy: MergeStrategy;
  verify: string | null;
  accept: boolean;
  push: boolean;
  keep: boolean;
  pollMs: number;
  /** How long a unit's agent may run (from its first start) before it is stopped. */
  unitTimeoutMs: number;
  signal: AbortSignal;
  log: (line: string) => void;
}

/** How often an agent found dead after a crash of the loop may be started again. */
const MAX_STARTS = 3;

/** This process as the loop's runner. */
function me(store: Store): LoopRecord["runner"] {
  return { pid: process.pid, start: processStart(process.pid), host: HOST, agent: store.actor.agent };
}

function newLoopId(now: Date): string {
  return now.getTime().toString(36);
}

/** The loop's integration branch: --into, else the configured or found one, else the current branch. */
export function integrationBranch(store: Store, into: string | null): string {
  const b = into ?? store.config.integrationBranch ?? store.repo.branch;
  if (!b) fail("usage", "no integration branch: give --into BRANCH or set git config handoff.integrationBranch");
  return checkBranchName(b);
}

export function checkBranchName(b: string): string {
  if (branchNameProblem(b)) fail("invalid_input", `not a branch name: ${JSON.stringify(b.slice(0, 80))}`);
  return b;
}

/** A new loop from the current plan, or the loop in progress to resume (refused if its runner lives). */
async function beginOrResume(store: Store, o: LoopRunOptions): Promise<LoopRecord | null> {
  const active = (await loadLoop(store))?.record;
  const into = active && isLoopActive(active) ? active.integration : integrationBranch(store, o.into);
  if (!(await branchTip(store.cwd, into))) fail("not_found", `no branch ${into} here`, { branch: into });
  const { tasks } = await listTasks(store);
  let resumed = false;
  const rec = await changeLoop(store, (cur, now) => {
    resumed = false;
    if (cur && isLoopActive(cur)) {
      const r = cur.runner;
      const abandon = { action: "reclaim" as const, detail: "if that runner is gone for good: git handoff loop stop --abandon (acts on nothing the record names)" };
      if (r.host !== HOST) fail("held_by_other", `loop ${cur.id} was started on ${r.host} (pid ${r.pid}); stop it there (loop stop) first`, { loop: cur.id, host: r.host }, [abandon]);
      // Resumed only as this clone planned it: the synced record may name any agent and task.
      const notOurs = ownLoopProblem(store, cur);
      if (notOurs) fail("held_by_other", `${notOurs}; resume or stop it where it was started`, { loop: cur.id }, [abandon]);
      if (r.pid !== process.pid && pidAlive(r.pid, r.start)) fail("held_by_other", `loop ${cur.id} is running (pid ${r.pid}); watch it with loop status, end it with loop stop`, { loop: cur.id, pid: r.pid });
      if (cur.phase === "stopping") return { record: { ...cur, phase: "stopped" }, note: "stopped (its runner was gone)" };
      if (cur.verify && o.verify === null) fail("usage", `loop ${cur.id} was started with --verify: give the check again to resume it`, { loop: cur.id });
      resumed = true;
      return { record: { ...cur, runner: me(store) }, note: `resumed by pid ${process.pid}` };
    }
    const plan = planLoop(tasks, now, { maxWorktrees: o.maxWorktrees });
    if (!plan.units.length) return null;
    const id = newLoopId(now);
    const units: LoopUnit[] = plan.units.map((p) => ({ ...p, phase: "planned", agent: unitAgent(id, p.id), branch: null, worktree: null, base: null, pid: null, pid_start: null, host: null, starts: 0, started_at: null, finished_at: null, result: null, onto: null, note: null, kept: false }));
    markLoopStartedHere(store, id, { integration: into, units });
    const record: LoopRecord = { id, phase: "running", integration: into, strategy: o.strategy, accept: o.accept, push: o.push, keep: o.keep, verify: o.verify !== null, max_worktrees: o.maxWorktrees, runner: me(store), started_at: now.toISOString(), updated_at: now.toISOString(), units };
    return { record, note: `started: ${units.map((u) => `${u.id} (${u.tasks.join(", ")})`).join("; ")}` };
  });
  if (rec && !isLoopActive(rec)) return null;
  if (rec) o.log(resumed ? `resuming ${rec.id}` : `${rec.id}: ${rec.units.length} unit${rec.units.length === 1 ? "" : "s"} into ${rec.integration}: ${rec.units.map((u) => `${u.id} [${u.tasks.join(" ")}]`).join(", ")}`);
  return rec;
}

export async function runLoop(store: Store, given: LoopRunOptions): Promise<LoopRecord | null> {
  const first = await beginOrResume(store, given);
  if (!first) return null;
  // A resumed loop goes on as it was started; only its commands come from this command line.
  const o: LoopRunOptions = { ...given, into: first.integration, strategy: first.strategy, accept: first.accept, push: first.push, keep: first.keep, maxWorktrees: first.max_worktrees };
  const launched = new Map<string, Launch>();
  const lastRenew = new Map<string, number>();
  let tick = new AbortController();
  /** An agent of ours ended: the next round starts now, not after the poll interval. */
  const wake = () => tick.abort();
  const renewEvery = Math.max(200, Math.floor(store.config.claimTtlMs / 3));
  const mergeOpts = { strategy: o.strategy, verify: o.verify, accept: o.accept, push: o.push, log: o.log };
  for (;;) {
    const rec = (await loadLoop(store))?.record;
    if (!rec || rec.id !== first.id) fail("conflict", `the loop record was replaced while ${first.id} ran`);
    ownLoop(store, rec);
    if (rec.runner.pid !== process.pid || rec.runner.host !== HOST) fail("held_by_other", `loop ${rec.id} was taken over by pid ${rec.runner.pid} on ${rec.runner.host}`);
    if (rec.phase === "stopping" || o.signal.aborted) return stopLoop(store, o.log);
    if (!isLoopActive(rec)) return rec;
    for (const u of rec.units) {
      if (u.phase === "running" || u.phase === "starting") {
        const mine = launched.get(u.id);
        // Not our child (the loop was restarted): its pid, or the pid file written right after the
        // spawn when the loop died before it could record it.
        let alive = mine ? mine.child.exitCode === null && mine.child.signalCode === null : await agentAlive(store, rec.id, u);
        // Bounded: an agent past --unit-timeout is stopped, and its unit is not started again.
        const timedOut = !!u.started_at && store.now().getTime() - Date.parse(u.started_at) > o.unitTimeoutMs;
        if (alive && timedOut) {
          o.log(`${u.id}: ran past --unit-timeout (${Math.round(o.unitTimeoutMs / 60_000)} min): stopping its agent`);
          const why = await stopAgent(mine ? { pid: mine.child.pid, start: mine.start } : ownAgent(store, rec.id, u));
          if (why) o.log(`${u.id}: ${why}`);
          if (mine) await mine.exited;
          alive = false;
        }
        if (alive && !mine && u.phase === "starting") {
          const own = ownAgent(store, rec.id, u);
          const pid = own?.pid ?? null;
          await updateUnit(store, u.id, (x) => ({ ...x, phase: "running", pid, pid_start: own?.start ?? null, starts: x.starts + 1 }), `${u.id} running (pid ${pid}, found after a restart)`);
          o.log(`${u.id}: found its agent running (pid ${pid}); watching it`);
        }
        if (alive) {
          if (!lastRenew.has(u.id)) lastRenew.set(u.id, Date.now());
          if (Date.now() - lastRenew.get(u.id)! >= renewEvery) {
            lastRenew.set(u.id, Date.now());
            await renewUnit(store, u).catch(() => {});
          }
          continue;
        }
        const open = await openTasks(store, u);
        launched.delete(u.id);
        if (!open.length) {
          await releaseUnit(store, u); // nothing left to release: ends the agent's session
          await updateUnit(store, u.id, (x) => ({ ...x, phase: "ready", pid: null }), `${u.id} ready`);
          o.log(`${u.id}: its tasks are done or in review`);
        } else if (!mine && !timedOut && u.starts < MAX_STARTS) {
          // Found dead after the loop itself was down: its claims go back, then it starts again.
          const released = await releaseUnit(store, u);
          o.log(`${u.id}: agent (pid ${u.pid ?? "none"}) is gone${released.length ? `; released ${released.join(", ")}` : ""}; restarting it`);
          await startUnit(store, rec, u, o, launched, wake);
        } else {
          const code = mine ? await mine.exited : null;
          await failUnit(store, rec.id, u, timedOut ? "the agent ran past --unit-timeout and was stopped" : `the agent ended${code !== null ? ` (exit ${code})` : ""}`, open, o.log);
        }
      }
    }
    const now = ownLoop(store, (await loadLoop(store))!.record);
    for (const u of now.units) {
      if (mayMerge(now, u)) {
        await integrateUnit(store, now, u, mergeOpts);
        const after = (await loadLoop(store))!.record.units.find((x) => x.id === u.id)!;
        if (after.phase === "merged") await tidy(store, now.id, after, o.keep, o.log);
        break; // one merge per round: the next sees the record it left
      }
    }
    const cur = ownLoop(store, (await loadLoop(store))!.record);
    const running = cur.units.filter((u) => u.phase === "running" || u.phase === "starting").length;
    let slots = Math.max(0, o.maxWorktrees - running);
    for (const u of cur.units) {
      if (slots <= 0 || !canStart(cur, u)) continue;
      const tip = (await branchTip(store.cwd, cur.integration))!;
      await startUnit(store, cur, { ...u, base: null }, o, launched, wake, tip);
      slots--;
    }
    const end = ownLoop(store, (await loadLoop(store))!.record);
    if (end.units.every((u) => isTerminal(u.phase))) {
      // A merged unit the loop died before tidying: its worktree would leak.
      for (const u of end.units) if (u.phase === "merged" && !u.kept && u.worktree && existsSync(u.worktree)) await tidy(store, end.id, u, o.keep, o.log);
      const done = await changeLoop(store, (c) => (c && c.id === end.id && isLoopActive(c) ? { record: { ...c, phase: "finished" }, note: `finished: ${summary(c)}` } : null));
      o.log(`${end.id} finished: ${summary(end)}`);
      return done;
    }
    await pause(o.pollMs, AbortSignal.any([o.signal, tick.signal]));
    if (tick.signal.aborted) tick = new AbortController();
  }
}

/** The record, when it is still the loop this clone planned; else the loop stops acting on it. */
function ownLoop(store: Store, rec: LoopRecord): LoopRecord {
  const why = ownLoopProblem(store, rec);
  if (why) fail("conflict", `${why}: this loop acts on nothing it names and ends here (its agents and worktrees are left as they are)`, { loop: rec.id });
  return rec;
}

async function startUnit(store: Store, rec: LoopRecord, u: LoopUnit, o: LoopRunOptions, launched: Map<string, Launch>, wake: () => void, tip?: string): Promise<void> {
  const base = tip ?? (await branchTip(store.cwd, rec.integration))!;
  try {
    const l = await launchUnit(store, rec, u, o.command, base, o.log);
    if (!l) return;
    launched.set(u.id, l);
    void l.exited.then(wake);
  } catch (e) {
    if (e instanceof HandoffError) throw e;
    await updateUnit(store, u.id, (x) => ({ ...x, phase: "failed", finished_at: store.now().toISOString(), note: `could not start: ${(e as Error).message}` }), `${u.id} failed`);
    o.log(`${u.id}: could not start: ${(e as Error).message}`);
  }
}

/** After a merge: the worktree goes, and the branch (its work is in the integration branch), unless kept. */
async function tidy(store: Store, loopId: string, u: LoopUnit, keep: boolean, log: (l: string) => void): Promise<void> {
  if (keep) {
    await updateUnit(store, u.id, (x) => ({ ...x, kept: true }), `${u.id} kept`);
    return;
  }
  const kept = await cleanupUnit(store, loopId, u, { dropBranch: true });
  if (kept) log(`${u.id}: ${kept}`);
  await updateUnit(store, u.id, (x) => ({ ...x, kept: !!kept, note: [x.note, kept].filter(Boolean).join("; ") || null }), kept ? `${u.id} kept` : `${u.id} cleaned up`);
}

function summary(r: LoopRecord): string {
  const by = new Map<string, string[]>();
  for (const u of r.units) by.set(u.phase, [...(by.get(u.phase) ?? []), u.id]);
  return [...by].map(([p, ids]) => `${p} ${ids.join(" ")}`).join(", ");
}

/**
 * Ends the loop: agents stopped (their process groups), their claims given back, worktrees without
 * uncommitted work removed (a branch only when it holds nothing new), the record `stopped`. Run by
 * the loop itself on `loop stop` or Ctrl-C, or by `loop stop` when the loop's process is gone.
 */
export async function stopLoop(store: Store, log: (l: string) => void): Promise<LoopRecord | null> {
  const rec = (await loadLoop(store))?.record;
  if (!rec || !isLoopActive(rec)) return rec ?? null;
  // Stopping releases claims as the units' agents: only for the units this clone planned.
  const notOurs = ownLoopProblem(store, rec);
  if (notOurs) fail("held_by_other", `${notOurs}; nothing it names is acted on here`, { loop: rec.id }, [{ action: "reclaim", detail: "git handoff loop stop --abandon (acts on nothing the record names)" }]);
  const tip = await branchTip(store.cwd, rec.integration);
  for (const u of rec.units) {
    if (isTerminal(u.phase)) continue;
    // A merge cut off after the branch moved is a merge: say so rather than "stopped".
    if (u.phase === "merging" && u.result && tip && (await isAncestor(store.cwd, u.result, tip))) {
      await updateUnit(store, u.id, (x) => ({ ...x, phase: "merged", kept: true, finished_at: store.now().toISOString(), note: "merged before the loop stopped; its branch and worktree are kept" }), `${u.id} merged`);
      continue;
    }
    // Only an agent this clone started is signalled (its pid file, not the record's pid).
    const own = u.host === HOST ? ownAgent(store, rec.id, u) : null;
    const unsent = own ? await stopAgent(own) : u.pid && u.host === HOST ? `pid ${u.pid} not signalled: no agent this clone started is recorded for it` : null;
    const released = u.phase === "planned" ? [] : await releaseUnit(store, u);
    let note = [unsent, released.length ? `released ${released.join(", ")}` : null].filter(Boolean).join("; ") || null;
    let kept = false;
    if (u.worktree) {
      const tip = u.branch ? await branchTip(store.cwd, u.branch) : null;
      const k = await cleanupUnit(store, rec.id, u, { dropBranch: tip === u.base });
      kept = !!k || (tip !== null && tip !== u.base);
      note = [note, k ?? (kept ? `kept ${u.branch}: it has commits` : null)].filter(Boolean).join("; ") || null;
    }
    await updateUnit(store, u.id, (x) => ({ ...x, phase: "stopped", pid: null, kept, note, finished_at: store.now().toISOString() }), `${u.id} stopped`);
    log(`${u.id}: stopped${note ? `: ${note}` : ""}`);
  }
  return changeLoop(store, (c) => (c && c.id === rec.id ? { record: { ...c, phase: "stopped" }, note: "stopped" } : null));
}

/**
 * `loop stop --abandon`: ends the record of a loop this clone cannot stop (its runner is on another
 * host that is gone, or the record came through the sync remote and names a runner nobody will
 * ever hear), so `loop run` may start anew. Nothing the record names is acted on here: no process
 * signalled, no folder or branch removed, no claim released (claims expire on their own). A runner
 * still alive elsewhere ends at its next round: it finds its loop stopped.
 */
export async function abandonLoop(store: Store, log: (l: string) => void): Promise<LoopRecord | null> {
  const cur = (await loadLoop(store))?.record ?? null;
  if (!cur || !isLoopActive(cur)) return cur;
  const r = cur.runner;
  if (r.host === HOST && loopStartedHere(store, cur.id) && r.pid !== process.pid && pidAlive(r.pid, r.start)) {
    fail("wrong_state", `loop ${cur.id} runs here (pid ${r.pid}): end it with loop stop, which stops its agents and cleans up`, { loop: cur.id, pid: r.pid });
  }
  const at = store.now().toISOString();
  const note = `abandoned by ${store.actor.agent}: nothing it names was acted on here`;
  const out = await changeLoop(store, (c) =>
    c && c.id === cur.id && isLoopActive(c)
      ? { record: { ...c, phase: "stopped", units: c.units.map((u) => (isTerminal(u.phase) ? u : { ...u, phase: "stopped", note, finished_at: at })) }, note }
      : null,
  );
  log(`${cur.id}: abandoned (runner pid ${r.pid} on ${r.host}); its agents, folders, branches and claims are left as they are`);
  return out ?? (await loadLoop(store))?.record ?? null;
}

/** `loop stop`: asks a live loop to stop and waits for it, or stops a loop whose process is gone. */
export async function requestStop(store: Store, o: { timeoutMs: number; log: (l: string) => void }): Promise<LoopRecord | null> {
  const cur = (await loadLoop(store))?.record ?? null;
  if (!cur || !isLoopActive(cur)) return cur;
  const notOurs = cur.runner.host === HOST ? ownLoopProblem(store, cur) : null;
  if (notOurs) {
    // A record naming this host that no loop here wrote (or not as planned here) came through the
    // sync remote: it may name any process, folder, agent of yours. Ask its runner to stop; act on
    // nothing it names.
    await changeLoop(store, (c) => (c && c.id === cur.id && c.phase === "running" ? { record: { ...c, phase: "stopping" }, note: `stop asked by ${store.actor.agent}` } : null));
    o.log(`${notOurs}: asked it to stop; no process is signalled and no folder removed here (if no runner ever answers: loop stop --abandon)`);
    return (await loadLoop(store))?.record ?? null;
  }
  const live = cur.runner.host === HOST ? pidAlive(cur.runner.pid, cur.runner.start) && cur.runner.pid !== process.pid : true;
  if (!live) {
    o.log(`${cur.id}: its process (pid ${cur.runner.pid}) is gone; stopping it here`);
    await changeLoop(store, (c) => (c && c.id === cur.id ? { record: { ...c, runner: me(store) }, note: "taken over to stop" } : null));
    return stopLoop(store, o.log);
  }
  await changeLoop(store, (c) => (c && c.id === cur.id && c.phase === "running" ? { record: { ...c, phase: "stopping" }, note: `stop asked by ${store.actor.agent}` } : null));
  const t0 = Date.now();
  for (;;) {
    const r = (await loadLoop(store))?.record ?? null;
    if (!r || !isLoopActive(r)) return r;
    if (cur.runner.host === HOST && !pidAlive(cur.runner.pid, cur.runner.start)) return stopLoop(store, o.log);
    if (Date.now() - t0 > o.timeoutMs) fail("timed_out", `loop ${cur.id} (pid ${cur.runner.pid}) did not stop within ${Math.round(o.timeoutMs / 1000)} s; it is still asked to`, { loop: cur.id });
    await pause(200);
  }
}
