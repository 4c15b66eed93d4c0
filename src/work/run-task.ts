// Running one task's command: in a fresh worktree at the task's base, with the task as a file and
// environment variables (never as part of a command line), its process group stopped on cancel.
// Its stdout (the tail) becomes the output, the files it leaves in HANDOFF_OUT_DIR the results.
import { spawn } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fail } from "../core/errors.ts";
import type { Task } from "../core/task.ts";
import { flatNameProblem, MAX_FILES_BYTES, outputTail, reportedFailure, type RefusedFile } from "../core/task-files.ts";
import { addDetachedWorktree, commitOf, commitWorktree, hasCommit, publishBranch, removeWorktree, revParse } from "../git/worktree.ts";
import { createExclusive, readNoFollow } from "../git/safe-file.ts";
import type { Store } from "../store/store.ts";
import type { Launch, TaskFolder } from "./agent-command.ts";
import { isObjectId } from "../core/object-id.ts";
import type { SpareWorktrees } from "./spare-worktree.ts";
import { markCommand, markOwner } from "./leftovers.ts";
import { describeTask } from "./task-file.ts";

export interface TaskRun {
  status: "done" | "failed" | "stopped";
  output: string;
  cut: number;
  reason: string | null;
  exitCode: number | null;
  files: Map<string, Buffer>;
  refused: RefusedFile[];
  /** Kept with --keep: where the worktree and the task's folder are. */
  kept: string | null;
  /** With pushBranch: the branch holding the code changes, and its commit (null: none made). */
  branch: { name: string; commit: string } | null;
  /**
   * Where the command ran: the task's verify command runs there next. It stays until the removal
   * given to `cleanedUp` runs (for good with `keep`); without `cleanedUp` it is gone on return.
   */
  worktree: string;
}

export interface RunInput {
  /** The Store of each step (the start, the branch at the end): a task may run for hours. */
  store: () => Promise<Store>;
  /** The repository's folder (git worktree commands). */
  cwd: string;
  task: Task;
  /** The local user's command line (run with /bin/sh -c), or an agent client's launch (agent-command.ts). */
  command: string | Launcher;
  /** More environment for the command (the worker's identity, self-delegation.ts). */
  env?: Record<string, string>;
  context: Map<string, Buffer>;
  files: Map<string, Buffer>;
  keep: boolean;
  /** Code changes (committed or not) go to the branch `handoff/<id>` on the sync remote. */
  pushBranch?: boolean;
  /** Aborted: the task was cancelled or the worker is stopping; the command's process group ends. */
  signal: AbortSignal;
  /** The command's stderr, passed through. */
  stderr: (chunk: Buffer) => void;
  /**
   * Given, the worktree and the task's folder are not removed by runTask: this gets the function
   * that removes them, for the caller to run once the result has gone out (someone may be waiting
   * on it, and removing a worktree starts git processes that would compete with the push).
   */
  cleanedUp?: (remove: () => Promise<void>) => void;
  /** A worktree made ahead, taken when it sits at the task's base. */
  spare?: SpareWorktrees;
}

/** Builds the command for one task once its folder exists. */
export type Launcher = (folder: TaskFolder) => Launch;

const STOP_GRACE_MS = 2000;

async function baseCommit(store: Store, task: Task): Promise<string> {
  if (task.base && (await commitHere(store, task.base))) return task.base;
  return defaultBase(store);
}

/** The commit a task without a base (or with one this clone lacks) starts from: the integration branch's, else HEAD's. */
export async function defaultBase(store: Store): Promise<string> {
  const branch = store.config.integrationBranch;
  for (const rev of [...(branch ? [branch, `origin/${branch}`] : []), "HEAD"]) {
    const commit = await commitOf(store.cwd, rev);
    if (commit) return commit;
  }
  // No commit at all (an unborn branch): the worktree git refuses says so.
  return "HEAD";
}

/** Whether `rev` names a commit here: a full object id (what `wait` records) is looked up in-process. */
async function commitHere(store: Store, rev: string): Promise<boolean> {
  if (isObjectId(rev)) {
    const o = await store.reader.read(rev).catch(() => null);
    if (o) return o.type === "commit";
  }
  return hasCommit(store.cwd, rev);
}

export async function runTask(input: RunInput): Promise<TaskRun> {
  const { cwd, task } = input;
  // Context and files share the folder: one name in both (only a hand-made inputs ref has it) would
  // have one silently replace the other.
  for (const name of input.context.keys()) if (input.files.has(name)) fail("corrupt_state", `the task's inputs name ${JSON.stringify(name)} both as context and as a file`, { task: task.id });
  const started = await input.store();
  const base = await baseCommit(started, task);
  // --keep leaves everything in one folder: no spare then.
  const spare = input.spare && !input.keep ? input.spare.take(base) : null;
  const home = mkdtempSync(join(tmpdir(), `handoff-${task.id}-`));
  // A folder kept (--keep) is the user's to look at: never swept as a leftover.
  if (!input.keep) markOwner(home, started.repo.commonDir);
  const inDir = join(home, "in");
  const outDir = join(home, "out");
  const worktree = join(spare?.home ?? home, "worktree");
  mkdirSync(inDir);
  mkdirSync(outDir);
  // A folder made just now under the temp dir, never in a checkout: nothing a task's sender
  // controls can be there. Made exclusively all the same: a name is never written through a link.
  for (const [name, data] of [...input.files, ...input.context]) createExclusive(join(inDir, name), data);
  const taskFile = join(home, "task.json");
  const described = describeTask(task, input.context, input.files, inDir);
  writeFileSync(taskFile, JSON.stringify(described.file, null, 2) + "\n");
  let launch: Launch | null = null;
  try {
    // Inside the try: a worktree git refuses (a base it cannot check out) still has the task's
    // folder (the sender's context and files) removed.
    if (!spare) await addDetachedWorktree(cwd, worktree, base);
    launch = typeof input.command === "string" ? null : input.command({ home, worktree, inDir, outDir, taskFile });
    // The folders a worker killed outright leaves are found by the next one (leftovers.ts).
    const owned = input.keep ? [] : spare ? [home, spare.home] : [home];
    const run = await spawnCommand(input, launch, worktree, owned, {
      ...input.env,
      HANDOFF_TASK_ID: task.id,
      HANDOFF_TASK_FILE: taskFile,
      HANDOFF_OUT_DIR: outDir,
      HANDOFF_IN_DIR: inDir,
      ...described.env,
    });
    const { output, cut } = outputTail(run.stdout, run.dropped);
    const collected = collectResultFiles(outDir);
    const kept = input.keep ? home : null;
    if (run.stopped) return { status: "stopped", output, cut, reason: null, exitCode: run.exitCode, ...collected, kept, branch: null, worktree };
    const reported = reportedFailure(run.firstLine);
    let reason = reported ?? (run.exitCode !== 0 ? `the command exited ${run.exitCode ?? `on ${run.signal}`}` : null);
    let branch: TaskRun["branch"] = null;
    if (!reason && input.pushBranch) {
      try {
        branch = await publishWork(await input.store(), task, worktree, base);
      } catch (e) {
        reason = (e as Error).message;
      }
    }
    return { status: reason ? "failed" : "done", output, cut, reason, exitCode: run.exitCode, ...collected, kept, branch, worktree };
  } finally {
    launch?.cleanup?.();
    if (!input.keep) {
      const folders = () => {
        rmSync(home, { recursive: true, force: true });
        if (spare) rmSync(spare.home, { recursive: true, force: true });
      };
      const remove = () => removeWorktree(cwd, worktree).then(folders, folders).catch(() => {});
      if (input.cleanedUp) input.cleanedUp(remove);
      else await remove();
    }
  }
}

/** The code changes of a task, as the branch handoff/<id>: null when the command changed nothing. */
async function publishWork(store: Store, task: Task, worktree: string, base: string): Promise<TaskRun["branch"]> {
  const baseOid = (await revParse(store.cwd, base)) ?? base;
  const head = await commitWorktree(worktree, `${task.id}: ${task.objective.split("\n")[0]!.slice(0, 72)}\n\nWork on task ${task.id} by ${store.actor.agent}.\n`, store.actor.agent);
  if (head === baseOid) return null;
  const name = `handoff/${task.id}`;
  await publishBranch(store.cwd, await store.syncRemote(), head, name);
  return { name, commit: head };
}

interface Spawned {
  /** The tail of stdout kept in memory. */
  stdout: Buffer;
  /** Bytes of stdout printed before that tail and let go. */
  dropped: number;
  firstLine: string;
  exitCode: number | null;
  signal: string | null;
  stopped: boolean;
}

function spawnCommand(input: RunInput, launch: Launch | null, cwd: string, owned: string[], env: Record<string, string>): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    // The command line is the local user's own; the task reaches it only through env and files.
    // An agent client gets the task as one argument of its own argv: no shell reads it. Its
    // stdin is closed (Codex reads a piped stdin as more prompt).
    const [file, args] = launch ? [launch.argv[0]!, launch.argv.slice(1)] : ["/bin/sh", ["-c", input.command as string]];
    const child = spawn(file, args, { cwd, env: { ...process.env, ...env, ...launch?.env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
    for (const home of owned) markCommand(home, child.pid);
    const chunks: Buffer[] = [];
    let size = 0;
    let dropped = 0;
    let head = "";
    let headDone = false;
    child.stdout!.on("data", (b: Buffer) => {
      if (!headDone) {
        head += b.toString("utf8");
        const nl = head.indexOf("\n");
        if (nl >= 0 || head.length > 8192) {
          head = nl >= 0 ? head.slice(0, nl) : head.slice(0, 8192);
          headDone = true;
        }
      }
      chunks.push(b);
      size += b.length;
      // Keep a bounded tail in memory whatever the command prints (what goes is counted as cut).
      while (size - (chunks[0]?.length ?? 0) > 2 * 256 * 1024) {
        const gone = chunks.shift()!.length;
        size -= gone;
        dropped += gone;
      }
    });
    child.stderr!.on("data", input.stderr);
    let stopped = false;
    const stop = () => {
      stopped = true;
      killGroup(child.pid, "SIGTERM");
      setTimeout(() => killGroup(child.pid, "SIGKILL"), STOP_GRACE_MS).unref();
    };
    if (input.signal.aborted) stop();
    else input.signal.addEventListener("abort", stop, { once: true });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      input.signal.removeEventListener("abort", stop);
      // A client that writes its last message to a file: that is the answer (its stdout is progress).
      const answer = launch?.outputFile ? readOr(launch.outputFile) : null;
      if (answer !== null) return resolve({ stdout: answer, dropped: 0, firstLine: answer.toString("utf8").split("\n", 1)[0]!.slice(0, 8192), exitCode: code, signal, stopped });
      resolve({ stdout: Buffer.concat(chunks), dropped, firstLine: head, exitCode: code, signal, stopped });
    });
  });
}

function readOr(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch {
    return null;
  }
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    /* already gone */
  }
}

/**
 * The files a command left for sending back: regular files with flat names, at most 25 MB
 * together. Everything else (folders, dotfiles, links, what does not fit) is refused and named.
 */
export function collectResultFiles(dir: string): { files: Map<string, Buffer>; refused: RefusedFile[] } {
  const files = new Map<string, Buffer>();
  const refused: RefusedFile[] = [];
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const name = entry.name;
    const problem = flatNameProblem(name);
    if (problem) {
      refused.push({ name, reason: `its name ${problem}` });
      continue;
    }
    const st = lstatSync(join(dir, name));
    if (st.isSymbolicLink()) refused.push({ name, reason: "it is a symbolic link (only regular files travel)" });
    else if (st.isDirectory()) refused.push({ name: `${name}/`, reason: "it is a folder (only flat files travel)" });
    else if (!st.isFile()) refused.push({ name, reason: "it is not a regular file" });
    else if (total + st.size > MAX_FILES_BYTES) refused.push({ name, reason: `it is ${st.size} bytes: the result files of a task are at most ${MAX_FILES_BYTES} bytes together` });
    else {
      // Never through a link put there after the lstat (the command may still be running children).
      const data = readNoFollow(join(dir, name));
      if (!data) {
        refused.push({ name, reason: "it could not be read as a regular file" });
        continue;
      }
      files.set(name, data);
      total += st.size;
    }
  }
  return { files, refused };
}
