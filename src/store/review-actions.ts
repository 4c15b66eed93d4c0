// `done` with verification, and the review queue's accept / reject.
import { fail, HandoffError } from "../core/errors.ts";
import { acceptReview, rejectReview, reviewQueue, submitForReview, submitProblem, type ReviewItem, type Submission } from "../core/review.ts";
import { settle } from "../core/task-ops.ts";
import type { Task } from "../core/task.ts";
import { checkVerifyCommand } from "../core/verify-command.ts";
import { resolveCommit } from "../git/commits.ts";
import { uncommittedPaths } from "../git/drift-paths.ts";
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
 * review; failed -> the result is recorded, the task stays with its agent. Whether the caller may
 * finish the task is checked before the (possibly long) run and again in the compare-and-swap after it.
 */
export async function doneWithVerification(store: Store, id: string, o: VerifyOptions): Promise<Task> {
  const { task, command } = await verificationToRun(store, id, o.command);
  const cwd = store.repo.workTree;
  if (!cwd) fail("invalid_input", "verification runs in a worktree; this repository has none here");
  const commit = o.commit !== undefined ? await resolveCommit(store.cwd, o.commit) : await worktreeHead(store);
  const submission = await runForReview(store, task, command, { cwd, commit, ...(o.note !== undefined ? { note: o.note } : {}), ...(o.onOutput ? { onOutput: o.onOutput } : {}) });
  return mutateTask(store, id, (t, ctx) => submitForReview(t, ctx, submission));
}

/**
 * The command `done` would run for task `id` (the caller's own, else the task's), refused before
 * anything runs when it may not: the task's own command is shared state and runs only if it was
 * written or approved in this clone (`unapproved_command`), and a task the caller may not finish
 * now (held by another, in review, finished) is refused as its submission would be. Every front
 * end that finishes a task with verification (`done`, MCP complete_task, the worker) starts here.
 */
export async function verificationToRun(store: Store, id: string, own?: string): Promise<{ task: Task; command: string }> {
  const { task } = await loadTask(store, id);
  const command = own !== undefined ? checkVerifyCommand(own) : task.verify;
  if (!command) {
    fail("usage", `task ${id} has no verify command: give one (done ${id} --verify CMD) or add the task with --verify CMD`);
  }
  // The caller's own --verify is their command; the task's is shared state and needs consent here.
  if (own === undefined) await requireApprovedVerify(store, task, command);
  // Judged as the write after the run will judge it (the takeover grace included), so a
  // verification that could only be refused afterwards is not run at all.
  const ctx = await store.writeContext(store.now());
  const early = submitProblem(settle(task, ctx).record, ctx);
  if (early) throw new HandoffError(early);
  return { task, command };
}

/** Runs `command` (from verificationToRun) in `cwd` and returns what goes to review with it. */
export async function runForReview(
  store: Store,
  task: Task,
  command: string,
  o: { cwd: string; commit: string | null; note?: string; onOutput?: (chunk: Buffer) => void; signal?: AbortSignal },
): Promise<Submission> {
  // How many paths differ from HEAD in the worktree (tracked or not): the reviewer should know.
  const uncommitted = (await uncommittedPaths(o.cwd)).length;
  const verification = { ...(await runVerification(command, o.cwd, store.config.verifyTimeoutMs, store.now(), o.onOutput, o.signal)), ...(uncommitted ? { uncommitted } : {}) };
  const diff = o.commit ? await taskDiff(store, task, o.commit) : null;
  return { verification, commit: o.commit, diff, ...(o.note !== undefined ? { note: o.note } : {}) };
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
