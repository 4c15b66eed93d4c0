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
import { eventFromMessage } from "../store/codec.ts";
import { firstParentChain, readCommit } from "../store/history.ts";
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
    const { context, files } = input.inputs;
    // The inputs commit first: the task's "created" step names it, and a worker reads exactly that.
    let inputs: string | null = null;
    if (context.size || files.size) {
      const record: TaskInputs = { task: id, context: entries(context), files: entries(files) };
      inputs = writeBundle(store, { file: INPUTS_FILE, record, folders: { context, files }, message: `inputs of ${id}: ${context.size} context, ${files.size} files\n`, parent: null });
    }
    const out = createTask({ id, objective: input.objective, priority: input.priority, scope: [], maxAttempts: store.config.maxAttempts, to: input.to, inputs }, { actor: store.actor, now });
    if (!out.ok) throw new HandoffError(out.refusal);
    const ref = taskRef(id);
    if (await store.readRef(ref)) fail("exists", `task ${id} already exists`, { task: id });
    const updates = [{ ref, new: writeSteps(store, null, TASK_FILE, out.steps), old: null }];
    if (inputs) updates.push({ ref: inputsRef(id), new: inputs, old: null });
    return { updates, result: out.record };
  }, { exclusive: true, createsOnly: true });
}

/**
 * What a task's first commit says of its inputs: the commit it was created with (null: none), or
 * `legacy` for a task made by a build from before the "created" step named it. Its history is a
 * line that receive never lets anyone rewrite or restart (a second "created" is refused), so this
 * binding holds whatever is pushed to refs/handoff/inputs/<id> since.
 */
export async function createdInputs(store: Store, id: string): Promise<{ legacy: true } | { legacy: false; inputs: string | null }> {
  const ref = taskRef(id);
  const tip = await store.readRef(ref);
  if (!tip) return { legacy: true };
  const chain = await firstParentChain(store, tip, ref);
  const event = eventFromMessage((await readCommit(store, chain[chain.length - 1]!, ref)).message);
  if (!event || event.type !== "created" || event.inputs === undefined) return { legacy: true };
  return { legacy: false, inputs: event.inputs };
}

/** `commit` of `ref`, fetched with the ref from the sync remote when it is not here; false if still missing. */
async function haveCommit(store: Store, ref: string, commit: string, pull: boolean): Promise<boolean> {
  if (await store.reader.info(commit)) return true;
  const remote = pull ? await store.syncRemote() : null;
  if (!remote) return false;
  await pullRef(store, remote, ref);
  return !!(await store.reader.info(commit));
}

export interface LoadedInputs {
  record: TaskInputs;
  context: Map<string, Buffer>;
  files: Map<string, Buffer>;
  /** A task from an older build names no inputs commit: these are whatever its inputs ref holds. */
  unverified: boolean;
}

/**
 * A task's inputs: exactly the commit its "created" step names (none when it names none), fetched
 * from the sync remote when this clone does not have it. A task from an older build names none:
 * its inputs ref's tip is read as before, and marked `unverified`.
 */
export async function loadInputs(store: Store, id: string, opts: { pull?: boolean } = {}): Promise<LoadedInputs | null> {
  const ref = inputsRef(id);
  const origin = await createdInputs(store, id);
  let at: string | null;
  if (!origin.legacy) {
    if (!origin.inputs) return null;
    at = origin.inputs;
    if (!(await haveCommit(store, ref, at, opts.pull !== false))) {
      fail("corrupt_state", `task ${id} was created with the inputs ${at.slice(0, 12)}, which are not here (${ref} does not hold them)`, { task: id, ref });
    }
  } else {
    at = await legacyTip(store, ref, opts.pull !== false);
    if (!at) return null;
  }
  const b = await readBundle(store, ref, at, INPUTS_FILE, TaskInputs);
  if (b.record.task !== id) fail("corrupt_state", `${ref} holds the inputs of task ${JSON.stringify(b.record.task)}`, { ref });
  return { record: b.record, context: await b.files("context", MAX_TASK_FILES * MAX_CONTEXT_FILE_BYTES), files: await b.files("files"), unverified: origin.legacy };
}

/** For a task from an older build, which names no commit: `ref`'s tip, fetched from the sync remote when it is not here. */
async function legacyTip(store: Store, ref: string, pull: boolean): Promise<string | null> {
  const at = await store.readRef(ref);
  const remote = at || !pull ? null : await store.syncRemote();
  if (!remote) return at;
  await pullRef(store, remote, ref);
  return store.readRef(ref);
}

export interface LoadedResults {
  record: TaskResultFiles;
  files: Map<string, Buffer>;
  /** A completion from an older build names no results commit: this is whatever the results ref holds. */
  unverified: boolean;
}

/**
 * What the worker sent back for a finished `task`: exactly the results commit its done/failed step
 * names (that step is the holder's, compare-and-swap and fenced), fetched from the sync remote when
 * needed. Null when it names none: a commit anyone pushed to refs/handoff/results/<id> is not the
 * task's result. A task both made and finished by older builds names none: the ref's tip is read
 * as before, marked `unverified`.
 */
export async function loadResults(store: Store, task: Task, opts: { pull?: boolean } = {}): Promise<LoadedResults | null> {
  const id = task.id;
  const ref = resultsRef(id);
  let at: string | null = task.result?.results ?? null;
  const legacy = !at && (await createdInputs(store, id)).legacy;
  if (at) {
    if (!(await haveCommit(store, ref, at, opts.pull !== false))) {
      fail("corrupt_state", `the completion of ${id} sent the results ${at.slice(0, 12)}, which are not here (${ref} does not hold them)`, { task: id, ref });
    }
  } else if (legacy) at = await legacyTip(store, ref, opts.pull !== false);
  if (!at) return null;
  const b = await readBundle(store, ref, at, RESULT_FILE, TaskResultFiles);
  if (b.record.task !== id) fail("corrupt_state", `${ref} holds the result of task ${JSON.stringify(b.record.task)}`, { ref });
  return { record: b.record, files: await b.files("files"), unverified: legacy };
}
