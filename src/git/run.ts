import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { childProcess } from "./builtins.ts";

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
  /** The call ran past `timeoutMs` and its process group was killed. */
  timedOut?: boolean;
}

/**
 * Objects and ref updates written by the tool carry their own identity, so writing coordination
 * state never depends on the user having configured `user.name` / `user.email`.
 */
export function toolIdentityEnv(agent = "git-handoff"): NodeJS.ProcessEnv {
  return {
    GIT_COMMITTER_NAME: agent,
    GIT_COMMITTER_EMAIL: "git-handoff@localhost",
    GIT_AUTHOR_NAME: agent,
    GIT_AUTHOR_EMAIL: "git-handoff@localhost",
  };
}

export interface RunOptions {
  cwd: string;
  input?: string | Buffer;
  env?: NodeJS.ProcessEnv;
  /** Keep GIT_DIR and friends: only repository discovery wants them. */
  inheritRepoEnv?: boolean;
  /**
   * A deadline for calls that reach other machines. git runs in its own process group, so on
   * expiry the whole group goes: `git push` and its transport helpers, ssh, a local receive-pack
   * and the hooks it started. TERM first, so git removes its own lock files; KILL after a grace.
   */
  timeoutMs?: number;
  /**
   * With `timeoutMs`: aborted, the call ends as its deadline would (a waiter's own deadline or
   * Ctrl-C arriving while it looks at the remote: the look is no longer wanted).
   */
  signal?: AbortSignal;
  /**
   * With `timeoutMs`: the most of its output read. Past it the call ends as its deadline would
   * (its group killed), and says so (`overflowed`): another machine's answer is not read without end.
   */
  maxStdout?: number;
}

/** gitBytes's result: the output as bytes (a pack is not text). */
export interface GitBytesResult extends Omit<GitResult, "stdout"> {
  stdout: Buffer;
  /** The output ran past `maxStdout`: the process group was killed, and `stdout` holds what came before. */
  overflowed?: boolean;
}

const KILL_GRACE_MS = 1000;

/**
 * A bounded git runs in its own session, so Ctrl-C or a TERM to us no longer reaches it: while any
 * runs, such a signal is passed on to its group, then takes its usual course here.
 */
const liveGroups = new Set<number>();
const SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

function passOn(signal: NodeJS.Signals): void {
  for (const pid of liveGroups) killGroup(pid, "SIGTERM");
  for (const s of SIGNALS) process.removeListener(s, passOn);
  // A command with its own handler (work/interrupts.ts) got this same signal already: raising it
  // again would be one more. Only without one does it take its default course (exit).
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

/** Whether a signal to this process is passed on (off in a process that finishes its work first). */
let passingOn = true;

/**
 * For a process that finishes what it started before it exits (the MCP server, mcp/stop-serving.ts):
 * a signal no longer stops its git commands, so a push on the wire lands and is recorded.
 * endLiveGit() ends whatever still runs when its time is up.
 */
export function finishGitOnSignals(): void {
  passingOn = false;
  for (const s of SIGNALS) process.removeListener(s, passOn);
}

/** Stops the bounded git commands still running (their groups, as a deadline does): the process exits next. */
export function endLiveGit(): void {
  for (const pid of liveGroups) killGroup(pid, "SIGTERM");
}

function track(pid: number, live: boolean): void {
  if (live) {
    if (liveGroups.size === 0 && passingOn) for (const s of SIGNALS) process.on(s, passOn);
    liveGroups.add(pid);
  } else if (liveGroups.delete(pid) && liveGroups.size === 0) {
    for (const s of SIGNALS) process.removeListener(s, passOn);
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* the group is gone */
  }
}

/**
 * Inside a git hook, git exports GIT_DIR (often relative) and GIT_INDEX_FILE. Once the repository
 * is discovered every call names its folder explicitly, so these must not leak into our own calls.
 */
const REPO_ENV_CLEARED = { GIT_DIR: undefined, GIT_WORK_TREE: undefined, GIT_INDEX_FILE: undefined, GIT_COMMON_DIR: undefined, GIT_PREFIX: undefined };

/**
 * A separate store (repo.ts storeDirOf) is a bare git dir: a call that runs in it (or in one being
 * moved out of the way, separate-store.ts) names it as GIT_DIR, so it is used even where
 * `safe.bareRepository=explicit` refuses to find a bare repository from the current folder.
 */
const STORE_DIR = /\/handoff-store\.git(\.old-\d+)?$/;
/**
 * The folder a store's commands run in: its clone's worktree (Store's constructor), so that what
 * git resolves from the current folder (a remote's relative URL, `core.hooksPath`) means what it
 * means for the repository's own commands.
 */
const storeHomes = new Map<string, string>();

export function runStoreFrom(storeDir: string, cwd: string): void {
  storeHomes.set(storeDir, cwd);
}

/** The folder a call given `cwd` runs in. */
export function placeOf(cwd: string): string {
  return storeHomes.get(cwd) ?? cwd;
}

/**
 * Repositories whose git dir is not found from their work tree (a dotfiles layout reached through
 * GIT_DIR and GIT_WORK_TREE): work tree to git dir. A call in such a work tree names both again,
 * since REPO_ENV_CLEARED took away what found them (repo.ts discoverWithGit fills this).
 */
const apartRepos = new Map<string, string>();

export function runRepoApart(workTree: string, gitDir: string): void {
  apartRepos.set(workTree, gitDir);
}

function apartEnv(cwd: string): NodeJS.ProcessEnv | null {
  for (const [workTree, gitDir] of apartRepos) {
    if (cwd !== workTree && !cwd.startsWith(workTree.endsWith("/") ? workTree : workTree + "/")) continue;
    // A folder below with a .git of its own is another repository (a work tree of $HOME holds
    // many): its calls keep finding their own.
    for (let dir = cwd; dir.length > workTree.length; dir = dirname(dir)) if (existsSync(`${dir}/.git`)) return null;
    return { GIT_DIR: gitDir, GIT_WORK_TREE: workTree };
  }
  return null;
}

export function envFor(opts: RunOptions): NodeJS.ProcessEnv {
  if (opts.inheritRepoEnv) return opts.env ? { ...process.env, ...opts.env } : process.env;
  if (STORE_DIR.test(opts.cwd)) return { ...process.env, ...REPO_ENV_CLEARED, GIT_DIR: opts.cwd, ...opts.env };
  const apart = apartRepos.size ? apartEnv(opts.cwd) : null;
  return { ...process.env, ...REPO_ENV_CLEARED, ...apart, ...opts.env };
}

/** Runs git and collects its output; never throws on a non-zero exit (callers decide). */
export async function git(args: string[], opts: RunOptions): Promise<GitResult> {
  const r = await gitBytes(args, opts);
  const { overflowed: _, ...rest } = r;
  return { ...rest, stdout: r.stdout.toString("utf8") };
}

/** git, its output kept as bytes. */
export function gitBytes(args: string[], opts: RunOptions): Promise<GitBytesResult> {
  return new Promise((resolve, reject) => {
    const bounded = opts.timeoutMs !== undefined;
    const child = childProcess().spawn("git", args, {
      cwd: placeOf(opts.cwd),
      env: envFor(opts),
      stdio: ["pipe", "pipe", "pipe"],
      detached: bounded,
    });
    if (!child.stdout || !child.stderr || !child.stdin) {
      // Out of file descriptors: no pipes were made, and the cause arrives as an error event.
      child.once("error", reject);
      return;
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let overflowed = false;
    let stop = () => {};
    let timedOut = false;
    let done = false;
    const timers: NodeJS.Timeout[] = [];
    let unlisten = () => {};
    const finish = (code: number | null) => {
      if (done) return;
      done = true;
      if (bounded && child.pid) track(child.pid, false);
      for (const t of timers) clearTimeout(t);
      unlisten();
      const r: GitBytesResult = { code: code ?? 1, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8") };
      resolve(overflowed ? { ...r, overflowed } : timedOut ? { ...r, timedOut } : r);
    };
    child.stdout.on("data", (b: Buffer) => {
      if (overflowed) return;
      outBytes += b.length;
      if (opts.maxStdout === undefined || outBytes <= opts.maxStdout) return void out.push(b);
      overflowed = true;
      stop();
    });
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.on("error", (e) => {
      done = true;
      if (bounded && child.pid) track(child.pid, false);
      for (const t of timers) clearTimeout(t);
      unlisten();
      reject(e);
    });
    child.on("close", finish);
    if (bounded && child.pid) {
      track(child.pid, true);
      const group = (signal: NodeJS.Signals) => killGroup(child.pid!, signal);
      stop = () => {
        if (done || timedOut) return;
        timedOut = true;
        group("SIGTERM");
        setTimeout(() => group("SIGKILL"), KILL_GRACE_MS).unref(); // even once git itself is gone
        // A grandchild outside the group (a daemonised ssh master) may keep the pipes open.
        timers.push(setTimeout(() => finish(child.exitCode ?? 1), KILL_GRACE_MS + 200));
      };
      timers.push(setTimeout(stop, Math.max(1, opts.timeoutMs!)));
      const signal = opts.signal;
      if (signal?.aborted) stop();
      else if (signal) {
        signal.addEventListener("abort", stop, { once: true });
        unlisten = () => signal.removeEventListener("abort", stop);
      }
    }
    child.stdin.on("error", () => {}); // git may exit before reading all input
    child.stdin.end(opts.input ?? "");
  });
}

/** Synchronous variant for start-up paths where an event loop turn costs more than it saves. */
export function gitSync(args: string[], opts: RunOptions): GitResult {
  const r = childProcess().spawnSync("git", args, {
    cwd: placeOf(opts.cwd),
    env: envFor(opts),
    input: opts.input ?? "",
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

/**
 * git's message in one line: its first, or, when that one only introduces the next (git daemon
 * refused: "unable to connect to 127.0.0.1:" then "127.0.0.1[0: 127.0.0.1]: errno=Connection
 * refused"), the two together.
 */
export function firstLine(text: string): string {
  const lines = text.trim().split("\n").filter((l) => l.trim());
  const first = (lines[0] ?? "").replace(/^(fatal|error): /, "");
  return first.endsWith(":") && lines[1] ? `${first} ${lines[1].trim().replace(/^(fatal|error): /, "")}` : first;
}

/**
 * A long-lived helper process (cat-file, update-ref) keeps Node running only while a request is
 * in flight, so a one-shot CLI call exits as soon as its work is done.
 */
export function setAlive(child: import("node:child_process").ChildProcess, alive: boolean): void {
  for (const h of [child, child.stdout, child.stderr, child.stdin] as unknown as ({ ref?(): void; unref?(): void } | null)[]) {
    if (alive) h?.ref?.();
    else h?.unref?.();
  }
}
