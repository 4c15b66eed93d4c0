// Starting or resuming the session loop (loop-run.ts runs it): the integration branch it merges
// into, and the record at refs/handoff/loop, either a new plan of the ready work or the loop in
// progress taken over from a runner that is gone.
import { fail } from "../core/errors.ts";
import { branchNameProblem, isLoopActive, unitAgent, type LoopRecord, type LoopUnit } from "../core/loop-record.ts";
import { planLoop } from "../core/loop-plan.ts";
import { branchTip } from "../git/branch-integrate.ts";
import { processStart } from "../git/process-alive.ts";
import { changeLoop, loadLoop, markLoopStartedHere, ownLoopProblem } from "../store/loop-store.ts";
import type { Store } from "../store/store.ts";
import { listTasks } from "../store/task-store.ts";
import type { LoopRunOptions } from "./loop-run.ts";
import { HOST, pidAlive } from "./loop-units.ts";

/** This process as the loop's runner. */
export function runnerHere(store: Store): LoopRecord["runner"] {
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
export async function beginOrResume(store: Store, o: LoopRunOptions): Promise<LoopRecord | null> {
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
      return { record: { ...cur, runner: runnerHere(store) }, note: `resumed by pid ${process.pid}` };
    }
    const plan = planLoop(tasks, now, { maxWorktrees: o.maxWorktrees });
    if (!plan.units.length) return null;
    if (plan.not_compared) o.log(`note: ${plan.not_compared.note}`);
    const id = newLoopId(now);
    const units: LoopUnit[] = plan.units.map((p) => ({ ...p, phase: "planned", agent: unitAgent(id, p.id), branch: null, worktree: null, base: null, pid: null, pid_start: null, host: null, starts: 0, started_at: null, finished_at: null, result: null, onto: null, note: null, kept: false }));
    markLoopStartedHere(store, id, { integration: into, units });
    const record: LoopRecord = { id, phase: "running", integration: into, strategy: o.strategy, accept: o.accept, push: o.push, keep: o.keep, verify: o.verify !== null, max_worktrees: o.maxWorktrees, runner: runnerHere(store), started_at: now.toISOString(), updated_at: now.toISOString(), units };
    return { record, note: `started: ${units.map((u) => `${u.id} (${u.tasks.join(", ")})`).join("; ")}` };
  });
  if (rec && !isLoopActive(rec)) return null;
  if (rec) o.log(resumed ? `resuming ${rec.id}` : `${rec.id}: ${rec.units.length} unit${rec.units.length === 1 ? "" : "s"} into ${rec.integration}: ${rec.units.map((u) => `${u.id} [${u.tasks.join(" ")}]`).join(", ")}`);
  return rec;
}
