// Finishing a task with what its command produced: the task's new state, the end of its file
// leases and its results ref move in ONE transaction (with a sync remote, one atomic push). A task
// with a verify command goes through the review gate as `done` takes it: `submission` is the
// verification run for it (review-actions.ts), and the task goes to review or, if it did not
// pass, fails (submitUnattended); never straight to done.
import { HandoffError } from "../core/errors.ts";
import { releaseTaskLeases } from "../core/lease-ops.ts";
import type { Task } from "../core/task.ts";
import { outputTail, reportedFailure, type TaskResultFiles } from "../core/task-files.ts";
import { resolveCommit } from "../git/commits.ts";
import { localMachine } from "../store/machine.ts";
import { completeTask, failTask } from "../core/task-ops.ts";
import { submitUnattended, verificationFailedReason, type Submission } from "../core/review.ts";
import { writeSteps } from "../store/codec.ts";
import { leaseUpdate, loadLeases } from "../store/lease-store.ts";
import type { Store } from "../store/store.ts";
import type { RefUpdate } from "../git/refs.ts";
import { loadTask, TASK_FILE, taskRef } from "../store/task-store.ts";
import { RESULT_FILE, resultsRef, writeBundle } from "./bundle.ts";
import { readInputs } from "./handover.ts";

export async function finishWithResults(store: Store, given: TaskResultFiles, files: Map<string, Buffer>, opts: { exclusive?: boolean; submission?: Submission } = {}): Promise<Task> {
  const s = opts.submission;
  // The result says what the waiter is told: a verification that did not pass failed the task.
  const result: TaskResultFiles = s && !s.verification.passed ? { ...given, status: "failed", reason: verificationFailedReason(s.verification) } : given;
  const id = result.task;
  const ref = taskRef(id);
  const rref = resultsRef(id);
  return store.casLoop(async (now) => {
    // The context every task write passes: with a sync remote, another agent's claim stands for
    // the takeover grace past its expiry, so a clock running ahead finishes no task of theirs.
    const ctx = await store.writeContext(now);
    const { task, tip } = await loadTask(store, id);
    const branch = result.branch ? `; code on branch ${result.branch}` : "";
    const note = `results on ${rref}: ${files.size} file${files.size === 1 ? "" : "s"}${branch}`;
    // The results commit first: the task's done/failed/submitted step names it, and that step
    // (compare-and-swap, fenced, by the holder) is what readers trust, never the results ref's tip.
    const previous = await store.readRef(rref);
    const record = { ...result, at: now.toISOString() };
    const results = writeBundle(store, { file: RESULT_FILE, record, folders: { files }, message: `result of ${id}: ${result.status}\n`, parent: previous });
    const done = { note, ...(result.commit ? { commit: result.commit } : {}), results };
    const out = s ? submitUnattended(task, ctx, { note, ...s, results }) : result.status === "done" ? completeTask(task, ctx, done) : failTask(task, ctx, result.reason ?? "failed", results);
    if (!out.ok) throw new HandoffError(out.refusal);
    const updates: RefUpdate[] = [{ ref, new: writeSteps(store, tip, TASK_FILE, out.steps), old: tip }];
    updates.push({ ref: rref, new: results, old: previous });
    const leases = await loadLeases(store);
    const lu = leaseUpdate(store, leases.tip, releaseTaskLeases(leases.set, id, ctx));
    if (lu) updates.push(lu);
    return { updates, result: out.record };
  }, opts.exclusive ? { exclusive: true } : {});
}

/**
 * Finishing a task by hand (MCP complete_task with `output` and `files`): the answer and the
 * files go back as a worker's would. `FAILED: reason` as the output's first line fails it.
 */
export async function completeWithResults(store: Store, id: string, input: { output: string; files: string[]; commit?: string }): Promise<Task> {
  const { files } = readInputs(store.repo.workTree ?? store.cwd, [], input.files, { context: "context", files: "files" }, store);
  const { output, cut } = outputTail(Buffer.from(input.output));
  const reason = reportedFailure(output);
  const commit = input.commit !== undefined ? await resolveCommit(store.cwd, input.commit) : null;
  const record: TaskResultFiles = {
    task: id,
    status: reason ? "failed" : "done",
    output,
    output_cut: cut,
    reason,
    exit_code: null,
    files: [...files].map(([name, b]) => ({ name, size: b.length })),
    refused: [],
    worker: store.actor.agent,
    machine: await localMachine(store),
    at: store.now().toISOString(),
    ...(commit ? { commit } : {}),
  };
  // Someone waits on it: it goes out at once, whatever --push says for other writes.
  return finishWithResults(store, record, files, { exclusive: true });
}
