// Finishing a task with what its command produced: the task's new state, the end of its file
// leases and its results ref move in ONE transaction (with a sync remote, one atomic push).
import { HandoffError } from "../core/errors.ts";
import { releaseTaskLeases } from "../core/lease-ops.ts";
import type { Task } from "../core/task.ts";
import type { TaskResultFiles } from "../core/task-files.ts";
import { completeTask, failTask } from "../core/task-ops.ts";
import { writeSteps } from "../store/codec.ts";
import { leaseUpdate, loadLeases } from "../store/lease-store.ts";
import type { Store } from "../store/store.ts";
import type { RefUpdate } from "../git/refs.ts";
import { loadTask, TASK_FILE, taskRef } from "../store/task-store.ts";
import { RESULT_FILE, resultsRef, writeBundle } from "./bundle.ts";

export async function finishWithResults(store: Store, result: TaskResultFiles, files: Map<string, Buffer>): Promise<Task> {
  const id = result.task;
  const ref = taskRef(id);
  const rref = resultsRef(id);
  return store.casLoop(async (now) => {
    const ctx = { actor: store.actor, now };
    const { task, tip } = await loadTask(store, id);
    const branch = result.branch ? `; code on branch ${result.branch}` : "";
    const note = `results on ${rref}: ${files.size} file${files.size === 1 ? "" : "s"}${branch}`;
    const done = { note, ...(result.commit ? { commit: result.commit } : {}) };
    const out = result.status === "done" ? completeTask(task, ctx, done) : failTask(task, ctx, result.reason ?? "failed");
    if (!out.ok) throw new HandoffError(out.refusal);
    const updates: RefUpdate[] = [{ ref, new: writeSteps(store.writer, tip, TASK_FILE, out.steps), old: tip }];
    const previous = await store.readRef(rref);
    const record = { ...result, at: now.toISOString() };
    updates.push({ ref: rref, new: writeBundle(store, { file: RESULT_FILE, record, folders: { files }, message: `result of ${id}: ${result.status}\n`, parent: previous }), old: previous });
    const leases = await loadLeases(store);
    const lu = leaseUpdate(store, leases.tip, releaseTaskLeases(leases.set, id, ctx));
    if (lu) updates.push(lu);
    return { updates, result: out.record };
  });
}
