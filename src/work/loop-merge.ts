// Integrating a finished unit: its worktree must hold no uncommitted work, the verification must
// pass, and the merge preview must be clean; only then does the integration branch move, by
// compare-and-swap, to a commit recorded beforehand (so a crash mid-merge is resumed, not repeated).
import type { LoopRecord, LoopUnit, MergeStrategy } from "../core/loop-record.ts";
import { oneLine } from "../core/one-line.ts";
import { branchTip, changedPaths, integrationCommit, isAncestor, moveBranch, pushBranch } from "../git/branch-integrate.ts";
import { neutralise } from "../present/untrusted.ts";
import { accept } from "../store/review-actions.ts";
import type { Store } from "../store/store.ts";
import { listTasks } from "../store/task-store.ts";
import { runVerification } from "../store/verify-runner.ts";
import { updateUnit } from "./loop-units.ts";

export interface MergeOptions {
  strategy: MergeStrategy;
  verify: string | null;
  accept: boolean;
  push: boolean;
  log: (line: string) => void;
}

const short = (oid: string | null) => (oid ?? "").slice(0, 12);

/** Finishes one unit that is `ready` (or was `merging` when the loop stopped): merged or refused, never half. */
export async function integrateUnit(store: Store, rec: LoopRecord, u: LoopUnit, o: MergeOptions): Promise<void> {
  // Not merged, the tasks stay done (or in review) while their work is only on the unit's branch:
  // say so, and how to merge it as the loop would have (loop run does not take a finished unit again).
  const unmerged = () => `; the work of ${u.tasks.join(", ")} is only on ${u.branch}: merge it by hand into ${rec.integration} (${handMerge(o.strategy, u)})`;
  const finish = (phase: LoopUnit["phase"], note: string | null, extra: Partial<LoopUnit> = {}) =>
    updateUnit(store, u.id, (x) => ({ ...x, phase, note: phase === "merged" || !note ? note : note + unmerged(), finished_at: store.now().toISOString(), ...extra }), `${u.id} ${phase}`);
  const into = rec.integration;
  const tip = u.branch ? await branchTip(store.cwd, u.branch) : null;
  const now = await branchTip(store.cwd, into);
  if (!tip || !now || !u.base) {
    await finish("failed", `${!now ? `the integration branch ${into}` : `the unit's branch ${u.branch}`} is gone`);
    return;
  }
  if (u.phase === "merging" && u.result && (await isAncestor(store.cwd, u.result, now))) {
    await afterMerge(store, rec, u, o, u.result, finish);
    return;
  }
  if (u.worktree) {
    const dirty = await changedPaths(u.worktree);
    if (dirty?.length) {
      await finish("refused", `not merged: ${u.worktree} has uncommitted changes (${dirty.slice(0, 5).join(", ")}); commit them on ${u.branch} or discard them`, { kept: true });
      o.log(`${u.id}: refused: uncommitted changes in ${u.worktree}`);
      return;
    }
  }
  if (o.verify && u.worktree) {
    o.log(`${u.id}: verifying: ${o.verify}`);
    const v = await runVerification(o.verify, u.worktree, store.config.verifyTimeoutMs, store.now());
    if (!v.passed) {
      const why = v.timed_out ? "timed out" : `exited ${v.exit_code ?? v.signal}`;
      const tail = v.output_tail.trim().split("\n").slice(-3).join(" | ");
      await finish("unverified", `verification failed (${why}): not merged; kept ${u.branch}${tail ? `: ${tail.slice(0, 300)}` : ""}`, { kept: true });
      o.log(`${u.id}: verification failed (${why}): not merged, kept ${u.branch} and ${u.worktree}`);
      return;
    }
  }
  for (let attempt = 0; attempt < 5; attempt++) {
    const onto = (await branchTip(store.cwd, into))!;
    const moved = onto !== u.base ? `${into} moved on since ${u.id} started (${short(u.base)} -> ${short(onto)}, ${movedBy(rec, u.base, onto)})` : null;
    if (moved) o.log(`${u.id}: ${moved}`);
    const { tasks } = await listTasks(store);
    // Objectives are other agents' text, read by whoever runs git log: one line each, nothing in it
    // that steers a terminal (a title, a CR over a forged trailer) or reorders what is read.
    const titles = u.tasks.map((id) => `- ${id}: ${neutralise(oneLine(tasks.find((t) => t.id === id)?.objective ?? "", 100))}`);
    const message = `loop ${rec.id} ${u.id}: ${u.tasks.join(", ")}\n\n${titles.join("\n")}\n`;
    const r = await integrationCommit(store.cwd, { strategy: o.strategy, onto, tip, base: u.base, message, agent: store.actor.agent });
    if (!r.ok) {
      const why = r.conflicts.length ? `would conflict with ${into} in ${r.conflicts.slice(0, 10).join(", ")}` : `could not be merged: ${r.error}`;
      await finish(r.conflicts.length ? "conflict" : "failed", `not merged: ${why}; kept ${u.branch}${moved ? `; ${moved}` : ""}`, { kept: true });
      o.log(`${u.id}: refused: ${why}; ${into} untouched, ${u.branch} kept`);
      return;
    }
    if (r.commit === onto) {
      await afterMerge(store, rec, u, o, onto, finish, moved ? `nothing new to merge; ${moved}` : "nothing new to merge");
      return;
    }
    await updateUnit(store, u.id, (x) => ({ ...x, phase: "merging", result: r.commit, onto }), `${u.id} merging ${short(r.commit)} onto ${short(onto)}`);
    const move = await moveBranch(store.cwd, into, r.commit, onto);
    if (move.ok) {
      o.log(`${u.id}: merged into ${into} (${o.strategy}) at ${short(r.commit)}`);
      await afterMerge(store, rec, u, o, r.commit, finish, moved);
      return;
    }
    if (move.reason !== "moved") {
      const what = move.reason === "dirty" ? `${move.message}: commit or stash them first` : move.message;
      await finish("refused", `not merged: ${what}`, { kept: true, result: null, onto: null });
      o.log(`${u.id}: refused: ${what}; then, there: ${handMerge(o.strategy, u)}`);
      return;
    }
  }
  await finish("refused", `not merged: ${into} kept moving`, { kept: true });
}

/** The git command that merges a kept unit as the loop's strategy would have, run where the integration branch is checked out. */
export function handMerge(strategy: MergeStrategy, u: LoopUnit): string {
  if (strategy === "squash") return `git merge --squash ${u.branch} && git commit`;
  if (strategy === "rebase" && u.base) return `git cherry-pick ${u.base}..${u.branch}`;
  return `git merge ${u.branch}`;
}

/** Who moved the integration branch from `base` to `now`: this loop's own merges, or someone else too. */
function movedBy(rec: LoopRecord, base: string, now: string): string {
  const merged: string[] = [];
  for (let cur = now, n = 0; cur !== base && n <= rec.units.length; n++) {
    const by = rec.units.find((x) => x.phase === "merged" && x.result === cur && x.onto);
    if (!by) return "with commits from outside this loop";
    merged.unshift(by.id);
    cur = by.onto!;
    if (cur === base) return `by this loop's merge of ${merged.join(", ")}`;
  }
  return "with commits from outside this loop";
}

async function afterMerge(store: Store, rec: LoopRecord, u: LoopUnit, o: MergeOptions, commit: string, finish: (p: LoopUnit["phase"], n: string | null, e?: Partial<LoopUnit>) => Promise<unknown>, note: string | null = null): Promise<void> {
  const notes = note ? [note] : [];
  if (o.accept) {
    const { tasks } = await listTasks(store);
    for (const id of u.tasks) {
      const t = tasks.find((x) => x.id === id);
      if (t?.status !== "review" || !t.review?.verification?.passed) continue;
      try {
        await accept(store, id, `merged by loop ${rec.id} (${u.id})`);
        o.log(`${u.id}: accepted ${id}`);
      } catch (e) {
        notes.push(`could not accept ${id}: ${(e as Error).message}`);
      }
    }
  }
  if (o.push) {
    const remote = await store.syncRemote();
    const p = remote ? await pushBranch(store.cwd, remote, rec.integration) : { ok: false, message: "no sync remote" };
    notes.push(p.ok ? `pushed ${rec.integration} to ${remote}` : `could not push ${rec.integration}: ${p.message}`);
    o.log(`${u.id}: ${notes.at(-1)}`);
  }
  await finish("merged", notes.length ? notes.join("; ") : null, { result: commit });
}
