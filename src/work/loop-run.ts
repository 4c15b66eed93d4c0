// The session loop: plans ready work into units, runs one agent per unit in its own worktree,
// integrates each finished unit in plan order, and cleans up. Its state is the record at
// refs/handoff/loop, re-read every round, so a loop killed at any point resumes where it was:
// a live agent is watched, a dead one restarted only after its claims are given back, a merged
// unit never runs again, and every worktree it made is named in the record.
// This file holds the rounds; loop-begin.ts starts or resumes the record, loop-stop.ts ends it.
import { existsSync } from "node:fs";
import { HandoffError, fail } from "../core/errors.ts";
import { canStart, isLoopActive, isTerminal, mayMerge, type LoopRecord, type LoopUnit, type MergeStrategy } from "../core/loop-record.ts";
import { branchTip } from "../git/branch-integrate.ts";
import { changeLoop, loadLoop, ownLoopProblem } from "../store/loop-store.ts";
import type { Store } from "../store/store.ts";
import { pause } from "../sync/follow-ref.ts";
import { beginOrResume } from "./loop-begin.ts";
import { integrateUnit } from "./loop-merge.ts";
import { failUnit } from "./loop-failed-unit.ts";
import { stopLoop } from "./loop-stop.ts";
import { agentAlive, cleanupUnit, HOST, launchUnit, openTasks, ownAgent, releaseUnit, renewUnit, stopAgent, updateUnit, type Launch } from "./loop-units.ts";

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
