// Test support: real git repositories in temp folders and the real built CLI in real processes.
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const CLI = resolve(import.meta.dirname, "../../dist/git-handoff.cjs");

/**
 * Environment for every spawned git or CLI: no user identity, no hook GIT_DIR leaking in, and no
 * NODE_EXTRA_CA_CERTS: Node reads and parses that bundle before any script runs (this machine's
 * environment names the system's whole 220 KB bundle: ~45 ms of CPU on every Node start, ~40% of
 * `node -e 0`), and no test or bench reaches a server it would certify (https tests name their own
 * authority). test/run.ts leaves it out of the test processes' environment for the same reason.
 */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", ...extra };
  for (const k of ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "HANDOFF_AGENT", "HANDOFF_NOW", "NODE_EXTRA_CA_CERTS"]) {
    if (!(k in extra)) delete env[k];
  }
  return env;
}

export function sh(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync(cmd, args, { cwd, env: cleanEnv(env), encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

export function gitOut(cwd: string, ...args: string[]): string {
  return sh("git", args, cwd, { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" }).trim();
}

const made: string[] = [];

/** A fresh temp folder (its real path, so git's answers compare equal). */
export function tempDir(prefix = "handoff-test-"): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

/** A new repository with one commit on `main`. */
export function tempRepo(): string {
  const dir = tempDir();
  gitOut(dir, "init", "-q", "-b", "main");
  gitOut(dir, "commit", "-q", "--allow-empty", "-m", "initial");
  return dir;
}

/**
 * A repository whose main branch has `.handoff.yaml` committed with `policy`, and a linked worktree
 * on a branch of its own (where a long-running front end runs while main's policy changes).
 */
export function repoWithPolicy(policy: string): { repo: string; worktree: string } {
  const repo = tempRepo();
  writeFileSync(`${repo}/.handoff.yaml`, policy);
  gitOut(repo, "add", ".handoff.yaml");
  gitOut(repo, "commit", "-q", "-m", "policy");
  const worktree = `${tempDir("handoff-worktree-")}/side`;
  gitOut(repo, "worktree", "add", "-q", "-b", "side", worktree);
  return { repo, worktree };
}

export function cleanupTemp(): void {
  // A detached writer (the catch record of a warned or denied edit, written after the answer by
  // its own process) or an async file operation of a closed store still in flight may add a file
  // while the folder goes. rmSync's own retries do not help: once a folder's entries are gone it
  // only retries that folder's rmdir, which fails for as long as the newcomer stays (seen: a temp
  // object's fan-out folder made after the stores closed). So the whole removal is tried again,
  // for up to about 5 s, which a loaded machine's writer needs.
  for (const d of made.splice(0)) removeTree(d);
}

function removeTree(dir: string): void {
  for (let n = 1; ; n++) {
    try {
      rmSync(dir, { recursive: true, force: true });
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOTEMPTY" || n >= 20) throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50 + 25 * n);
    }
  }
}

/** `r`, after asserting the command exited 0 (its output in the message otherwise). */
export function succeeded(r: CliResult): CliResult {
  if (r.code !== 0) throw new Error(`exit ${r.code}:\n${r.stdout}\n${r.stderr}`);
  return r;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (undefined when it is not JSON). */
  json: any;
}

function toResult(code: number, stdout: string, stderr: string): CliResult {
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}

export interface CliOptions {
  cwd: string;
  agent?: string;
  env?: NodeJS.ProcessEnv;
  input?: string;
}

function cliEnv(o: CliOptions): NodeJS.ProcessEnv {
  return cleanEnv({ ...(o.agent ? { HANDOFF_AGENT: o.agent } : {}), ...o.env });
}

/**
 * How cli(), cliAsync(), handover.ts start() and mcp.ts overStdio() start the CLI:
 * `node --no-rehash-snapshot` skips V8's re-seeding of the start-up snapshot's hash tables (HashSeed::InitializeRoots, ~12% of a `node -e 0`'s CPU, ~4 ms of
 * a ~35 ms `task list`), which nothing a test observes depends on. Not for the product (a fixed
 * seed weakens hash-flooding protection): for the suite's ~4,400 CLI starts. V8 rejects a code
 * cache made under other flags, so flagged processes keep theirs in a folder of their own (beside
 * the user's code cache): sharing one with the unflagged starts of the same bundle and verb (git
 * hooks, agents' hooks, catch writers) would have each reject and rewrite the other's. So `hook` calls,
 * whose bundles those unflagged starts use, and calls that choose their own cache, home or code
 * cache behaviour (the tests of the code cache) start exactly as before.
 * HANDOFF_TEST_REHASH=1 starts every call plainly (to measure the difference). Not for processes
 * whose code cache folder is new (cache-coherence's worlds): cold, the flag costs more than it saves,
 * Node's own modules compiled without their code cache too.
 */
const NO_REHASH: readonly string[] = process.env.HANDOFF_TEST_REHASH ? [] : ["--no-rehash-snapshot"];

/**
 * Verbs started plainly: `hook` (see above), and those that load enough of Node's own modules that
 * compiling them without Node's code cache (which V8 rejects under any other flag, as it does ours)
 * costs more than the flag saves (doctor +6%, stats +10%, help even, in A/B pairs of one call;
 * mcp-stdio.test.ts, whose servers stay up, 1.04x in five pairs of the file).
 */
const UNFLAGGED = new Set(["hook", "doctor", "stats", "help", "mcp"]);

/** Node's arguments and the environment of `git-handoff ARGS` started by a test (NO_REHASH's doc says when flagged). */
export function cliStart(args: string[], o: CliOptions): { argv: string[]; env: NodeJS.ProcessEnv } {
  const env = cliEnv(o);
  const own = o.env && ["XDG_CACHE_HOME", "HOME", "HANDOFF_NO_CODE_CACHE", "HANDOFF_CODE_CACHE_LONG_MS"].some((k) => k in o.env!);
  if (own || UNFLAGGED.has(args[0]!) || !NO_REHASH.length) return { argv: [CLI, ...args], env };
  return { argv: [...NO_REHASH, CLI, ...args], env: { ...env, XDG_CACHE_HOME: flaggedCache() } };
}

let flaggedCacheDir = "";
/** Beside the user's code cache folder, as lasting: a folder made new each run cost every verb a cold start. */
function flaggedCache(): string {
  const base = process.env.XDG_CACHE_HOME || (process.env.HOME ? join(process.env.HOME, ".cache") : tmpdir());
  return (flaggedCacheDir ||= join(base, "handoff-tests-no-rehash"));
}

/**
 * HANDOFF_TEST_CLI_LOG=<file>: each CLI call made through cli() or cliAsync() appends a line
 * `<test file>\t<first two words>\t<ms>`, a census of which files start the most CLI processes and
 * for which verbs (docs/architecture.md: where the suite's CPU goes). `caller` is a stack taken
 * when the call was made, where the test file's frame still is.
 */
function logCall(caller: string | undefined, args: string[], started: number): void {
  const file = /[\\/]test[\\/]([^\\/]+\.test\.ts)/.exec(caller ?? "")?.[1] ?? "?";
  appendFileSync(process.env.HANDOFF_TEST_CLI_LOG!, `${file}\t${args.slice(0, 2).join(" ")}\t${Math.round(performance.now() - started)}\n`);
}

/** Runs `git-handoff ARGS` synchronously in a real process. */
export function cli(args: string[], o: CliOptions): CliResult {
  const started = performance.now();
  const start = cliStart(args, o);
  const r = spawnSync(process.execPath, start.argv, { cwd: o.cwd, env: start.env, encoding: "utf8", input: o.input ?? "" });
  if (process.env.HANDOFF_TEST_CLI_LOG) logCall(new Error().stack, args, started);
  return toResult(r.status ?? 1, r.stdout, r.stderr);
}

/** Runs `git-handoff ARGS` as a concurrent process; resolves when it exits. */
export function cliAsync(args: string[], o: CliOptions): Promise<CliResult> {
  const started = performance.now();
  const caller = process.env.HANDOFF_TEST_CLI_LOG ? new Error().stack : undefined;
  return new Promise((res, rej) => {
    const start = cliStart(args, o);
    const child = spawn(process.execPath, start.argv, { cwd: o.cwd, env: start.env });
    let out = "";
    let err = "";
    child.stdout.on("data", (b) => (out += b));
    child.stderr.on("data", (b) => (err += b));
    child.on("error", rej);
    child.on("close", (code) => {
      if (caller) logCall(caller, args, started);
      res(toResult(code ?? 1, out, err));
    });
    // A child that exits before reading its input (a refusal, a crash) closes the pipe: the write
    // then fails with EPIPE, which is the child's outcome to report (its exit status), not the
    // test process's to die of. Nothing to send, nothing written: the pipe is only closed.
    child.stdin.on("error", () => {});
    if (o.input) child.stdin.end(o.input);
    else child.stdin.end();
  });
}

/** Every ref under refs/handoff/ with its value: compare before and after to prove nothing moved. */
/**
 * Catch logs (refs/handoff/log/<agent>: refused claims, hook denials, predicted conflicts, for
 * `stats`) are left out: they record that something was refused, they are not state. Pass
 * `{ logs: true }` to include them.
 */
export function handoffRefs(cwd: string, opts: { logs?: boolean } = {}): string {
  // A clone whose coordination refs are in a separate store (git handoff store --separate) is read there.
  const store = `${cwd}/.git/handoff-store.git`;
  const all = gitOut(cwd, ...(existsSync(`${store}/HEAD`) ? [`--git-dir=${store}`] : []), "for-each-ref", "--format=%(refname) %(objectname)", "refs/handoff/");
  return opts.logs ? all : all.split("\n").filter((l) => !l.startsWith("refs/handoff/log/")).join("\n");
}

/**
 * Runs `finish` (commands that finish a task, which end the leases serving it) and puts the lease
 * ref back where it was: the state a merge with an older build's clone, or a hand-edited ref,
 * leaves (a lease serving a finished task), which `lease --task` no longer writes itself.
 */
export function keepingLeases(repo: string, finish: () => void): void {
  const tip = gitOut(repo, "rev-parse", "refs/handoff/leases");
  finish();
  sh("git", ["update-ref", "refs/handoff/leases", tip], repo);
}

/**
 * Writes `agent`'s lease on `pattern` for `task` straight into the lease set, at `now` (HANDOFF_NOW
 * as given, else the clock): the lease an older build's `lease --task` wrote for a task its caller
 * did not hold (nobody's, or a claim of its own that had run out), which a merge with that build's
 * clone still brings, and which `lease --task` now refuses to write itself.
 */
export async function leaseAsOlderBuild(repo: string, agent: string, lease: { pattern: string; task: string; ttlMs: number; exclusive?: boolean }, env: NodeJS.ProcessEnv = {}): Promise<void> {
  const { openStore } = await import("../../src/store/store.ts");
  const { mutateLeases } = await import("../../src/store/lease-store.ts");
  const { acquireLeases } = await import("../../src/core/lease-ops.ts");
  const store = await openStore({ cwd: repo, agent, env: cleanEnv(env) });
  try {
    const req = { patterns: [lease.pattern], exclusive: lease.exclusive ?? false, task: lease.task, ttlMs: lease.ttlMs, reason: null };
    await mutateLeases(store, (s, ctx) => acquireLeases(s, req, ctx));
  } finally {
    store.close();
  }
}

/**
 * Adds tasks in-process through the store (the same function as `git handoff task add`): for
 * tests whose subject is not `task add` itself, so setup costs no CLI process per task.
 */
export async function seedTasks(repo: string, tasks: { id: string; objective?: string; priority?: number; scope?: string[] }[], agent = "lead"): Promise<void> {
  const { openStore } = await import("../../src/store/store.ts");
  const { addTask } = await import("../../src/store/task-store.ts");
  const store = await openStore({ cwd: repo, agent, env: cleanEnv() });
  try {
    for (const t of tasks) {
      await addTask(store, { id: t.id, objective: t.objective ?? `work on ${t.id}`, priority: t.priority ?? 0, scope: t.scope ?? [], maxAttempts: store.config.maxAttempts });
    }
  } finally {
    store.close();
  }
}
