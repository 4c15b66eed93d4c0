// `done` with verification, and the review queue's accept / reject.
import { fail, HandoffError } from "../core/errors.ts";
import { acceptReview, rejectReview, reviewQueue, submitForReview, submitProblem, type ReviewItem } from "../core/review.ts";
import { settle } from "../core/task-ops.ts";
import type { Task } from "../core/task.ts";
import { checkVerifyCommand } from "../core/verify-command.ts";
import { resolveCommit } from "../git/commits.ts";
import { git } from "../git/run.ts";
import { worktreeHead } from "./worktree-head.ts";
import { taskDiff } from "./handoff-actions.ts";
import type { Store } from "./store.ts";
import { runVerification } from "./verify-runner.ts";
import { requireApprovedVerify } from "./verify-consent.ts";
import { listTasks, loadTask } from "./task-store.ts";
import { mutateTaskFollowed as mutateTask } from "./task-lease-store.ts";

export interface VerifyOptions {
  /** The command; undefined means the task's own `verify`. */
  command?: string;
  commit?: string;
  note?: string;
  /** Sees the command's output while it runs. */
  onOutput?: (chunk: Buffer) => void;
}

/** Whether `done` on this task should verify: it has its own command. */
export async function taskVerifyCommand(store: Store, id: string): Promise<string | null> {
  return (await loadTask(store, id)).task.verify ?? null;
}

/**
 * Runs the verification in the caller's worktree and records it: passed -> the task goes to
 * review; failed -> the result is recorded, the task stays with its agent. The caller may finish
 * the task is checked before the (possibly long) run and again in the compare-and-swap after it.
 */
export async function doneWithVerification(store: Store, id: string, o: VerifyOptions): Promise<Task> {
  const { task } = await loadTask(store, id);
  const command = o.command !== undefined ? checkVerifyCommand(o.command) : task.verify;
  if (!command) {
    fail("usage", `task ${id} has no verify command: give one (done ${id} --verify CMD) or add the task with --verify CMD`);
  }
  // The caller's own --verify is their command; the task's is shared state and needs consent here.
  if (o.command === undefined) await requireApprovedVerify(store, task, command);
  const early = submitProblem(settle(task, { actor: store.actor, now: store.now() }).record, { actor: store.actor, now: store.now() });
  if (early) throw new HandoffError(early);
  const cwd = store.repo.workTree;
  if (!cwd) fail("invalid_input", "verification runs in a worktree; this repository has none here");
  const commit = o.commit !== undefined ? await resolveCommit(store.cwd, o.commit) : await worktreeHead(store);
  const uncommitted = await uncommittedPaths(cwd);
  const verification = { ...(await runVerification(command, cwd, store.config.verifyTimeoutMs, store.now(), o.onOutput)), ...(uncommitted ? { uncommitted } : {}) };
  const diff = commit ? await taskDiff(store, task, commit) : null;
  return mutateTask(store, id, (t, ctx) => submitForReview(t, ctx, { verification, commit, diff, ...(o.note !== undefined ? { note: o.note } : {}) }));
}

/** How many paths differ from HEAD in the worktree (tracked or not): the reviewer should know. */
async function uncommittedPaths(cwd: string): Promise<number> {
  const r = await git(["status", "--porcelain", "-z", "--untracked-files=normal"], { cwd });
  return r.code === 0 ? r.stdout.split("\0").filter((l) => l.length > 3).length : 0;
}

export async function listReview(store: Store): Promise<{ items: ReviewItem[]; problems: string[] }> {
  const { tasks, problems } = await listTasks(store);
  return { items: reviewQueue(tasks), problems };
}

/** `opts.seen`: the submitted_at of the submission judged (a newer one is refused, review.ts). */
export function accept(store: Store, id: string, reason: string | null, opts: { seen?: string } = {}): Promise<Task> {
  return mutateTask(store, id, (t, ctx) => acceptReview(t, ctx, reason, { allowSelf: store.config.reviewAllowSelf, ...opts }));
}

export function reject(store: Store, id: string, reason: string | null, opts: { seen?: string } = {}): Promise<Task> {
  return mutateTask(store, id, (t, ctx) => rejectReview(t, ctx, reason, opts));
}
