// Creating a task with the files it needs (context and input files as blobs on
// refs/handoff/inputs/<id>), and reading back what the worker sent (refs/handoff/results/<id>).
// With a sync remote both go out in one atomic push: whoever waits on them needs them now.
import { readFileSync, statSync } from "node:fs";
import { freshBytes } from "../store/entropy.ts";
import { basename, join, resolve } from "node:path";
import type { Address } from "../core/address.ts";
import { fail, HandoffError } from "../core/errors.ts";
import { newTaskId } from "../core/ids.ts";
import type { Task } from "../core/task.ts";
import { createTask } from "../core/task-ops.ts";
import { flatNameProblem, MAX_CONTEXT_FILE_BYTES, MAX_FILES_BYTES, MAX_TASK_FILES, TaskInputs, TaskResultFiles } from "../core/task-files.ts";
import { writeSteps } from "../store/codec.ts";
import { resolvePaths } from "../store/lease-actions.ts";
import type { Store } from "../store/store.ts";
import { TASK_FILE, taskRef } from "../store/task-store.ts";
import { pullRef } from "../sync/follow-ref.ts";
import { refuseSelfDelegation } from "./self-delegation.ts";
import { INPUTS_FILE, inputsRef, readBundle, RESULT_FILE, resultsRef, writeBundle } from "./bundle.ts";

export interface Inputs {
  context: Map<string, Buffer>;
  files: Map<string, Buffer>;
}

/**
 * Reads `--context-file` and `--file` paths: flat, distinct names, bounded sizes. Nothing is written.
 * `within`: the paths an agent gave through a tool (MCP), read only inside that store's worktree,
 * never through a symlink out of it and never under .git (lease-actions.ts resolvePaths, the rule
 * for leases): these files are pushed to the sync remote, and an agent that can only call tools
 * must not be able to send /etc/passwd, or .git/config and the credentials in its URLs, with them.
 * A person's own `git handoff wait --file` reads what the person names.
 */
export function readInputs(cwd: string, contextPaths: string[], filePaths: string[], labels = { context: "--context-file", files: "--file" }, within?: Store): Inputs {
  const names = new Set<string>();
  const read = (path: string, option: string, max: number): [string, Buffer] => {
    const full = within ? join(within.repo.workTree ?? cwd, resolvePaths(within, [path], cwd)[0]!) : resolve(cwd, path);
    let size: number;
    try {
      const st = statSync(full);
      if (!st.isFile()) fail("invalid_input", `${option} ${path} is not a file`, { path });
      size = st.size;
    } catch (e) {
      if (e instanceof HandoffError) throw e;
      fail("invalid_input", `${option} ${path}: no such file`, { path }, [{ action: "fix_input", detail: "give the path of an existing file" }]);
    }
    if (size > max) fail("invalid_input", `${option} ${path} is ${size} bytes; at most ${max}`, { path, size });
    const name = basename(full);
    const problem = flatNameProblem(name);
    if (problem) fail("invalid_input", `${option} ${path}: the name ${JSON.stringify(name)} ${problem}`, { path });
    if (names.has(name)) fail("invalid_input", `${option} ${path}: another file is already named ${JSON.stringify(name)} (files travel by name only)`, { path });
    names.add(name);
    return [name, readFileSync(full)];
  };
  if (contextPaths.length + filePaths.length > MAX_TASK_FILES) fail("invalid_input", `${contextPaths.length + filePaths.length} files; at most ${MAX_TASK_FILES} per task`);
  const context = new Map(contextPaths.map((p) => read(p, labels.context, MAX_CONTEXT_FILE_BYTES)));
  const files = new Map(filePaths.map((p) => read(p, labels.files, MAX_FILES_BYTES)));
  const total = [...files.values()].reduce((n, b) => n + b.length, 0);
  if (total > MAX_FILES_BYTES) fail("invalid_input", `the ${labels.files} files are ${total} bytes together; at most ${MAX_FILES_BYTES}`);
  return { context, files };
}

const entries = (m: Map<string, Buffer>) => [...m].map(([name, b]) => ({ name, size: b.length }));

/** Creates the task and its inputs in one transaction; with a sync remote, pushed at once. */
export async function createHandover(
  store: Store,
  input: { objective: string; priority: number; to: Address | null; inputs: Inputs; id?: string },
): Promise<Task> {
  refuseSelfDelegation(input.to);
  return store.casLoop(async (now) => {
    const id = input.id ?? newTaskId(freshBytes(8));
    const out = createTask({ id, objective: input.objective, priority: input.priority, scope: [], maxAttempts: store.config.maxAttempts, to: input.to }, { actor: store.actor, now });
    if (!out.ok) throw new HandoffError(out.refusal);
    const ref = taskRef(id);
    if (await store.readRef(ref)) fail("exists", `task ${id} already exists`, { task: id });
    const updates = [{ ref, new: writeSteps(store, null, TASK_FILE, out.steps), old: null }];
    const { context, files } = input.inputs;
    if (context.size || files.size) {
      const record: TaskInputs = { task: id, context: entries(context), files: entries(files) };
      const commit = writeBundle(store, { file: INPUTS_FILE, record, folders: { context, files }, message: `inputs of ${id}: ${context.size} context, ${files.size} files\n`, parent: null });
      updates.push({ ref: inputsRef(id), new: commit, old: null });
    }
    return { updates, result: out.record };
  }, { exclusive: true, createsOnly: true });
}

/** A task's inputs, fetched from the sync remote when this clone does not have them. */
export async function loadInputs(store: Store, id: string, opts: { pull?: boolean } = {}): Promise<{ record: TaskInputs; context: Map<string, Buffer>; files: Map<string, Buffer> } | null> {
  const ref = inputsRef(id);
  let tip = await store.readRef(ref);
  const remote = tip || opts.pull === false ? null : await store.syncRemote();
  if (remote) {
    await pullRef(store, remote, ref);
    tip = await store.readRef(ref);
  }
  if (!tip) return null;
  const b = await readBundle(store, ref, tip, INPUTS_FILE, TaskInputs);
  return { record: b.record, context: await b.files("context", MAX_TASK_FILES * MAX_CONTEXT_FILE_BYTES), files: await b.files("files") };
}

/** What the worker sent back, fetched from the sync remote when needed; null when there is none. */
export async function loadResults(store: Store, id: string, opts: { pull?: boolean } = {}): Promise<{ record: TaskResultFiles; files: Map<string, Buffer> } | null> {
  const ref = resultsRef(id);
  const remote = opts.pull === false ? null : await store.syncRemote();
  if (remote) await pullRef(store, remote, ref);
  const tip = await store.readRef(ref);
  if (!tip) return null;
  const b = await readBundle(store, ref, tip, RESULT_FILE, TaskResultFiles);
  if (b.record.task !== id) fail("corrupt_state", `${ref} holds the result of task ${JSON.stringify(b.record.task)}`, { ref });
  return { record: b.record, files: await b.files("files") };
}
