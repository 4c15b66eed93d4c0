// Test support for the cache-coherence differential test (test/cache-coherence.test.ts): the
// repositories a walk runs in. `A` is the repository under test (with, in some walks, a bare sync
// remote `R` and a second clone `B`); `T` is the ground truth, a copy of A with every disposable
// cache under .git/handoff/ removed, run one-shot with a code cache of its own. A write to A is made
// again in the truth at A's own path (the folders are swapped for it, and R with R's copy `Rt`),
// so the commits come out byte for byte the same and the refs left behind can be compared.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, cleanEnv, tempDir } from "./repo.ts";
import { overStdio, type McpHandle } from "./mcp.ts";

/**
 * What under .git/handoff/ is local state rather than a cache of refs (read from src/: the push
 * queue and budget, clock skew measured against the remote, rivals seen, approved verify commands,
 * quarantined refs, verification runs, hook catches waiting for their writer, write turns, ref
 * temps, the store-move lock, the stamps and locks of the last fetch and sync a remote's calls
 * coalesce on). Everything else there is keyed by ref tips and may be deleted.
 */
const STATE = [/^pending-/, /^traffic-/, /^clock-/, /^rivals$/, /^approvals\.json$/, /^quarantine\.json$/, /^verification-runs$/, /^catch-pending$/, /^turns$/, /^ref-temps$/, /\.lock$/, /^(fetch|sync)-.*\.done$/];

export function stripCaches(repo: string): string[] {
  const dir = join(repo, ".git", "handoff");
  if (!existsSync(dir)) return [];
  const gone: string[] = [];
  for (const name of readdirSync(dir)) {
    if (STATE.some((re) => re.test(name))) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
    gone.push(name);
  }
  return gone;
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export const GIT_ID = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" };

export function runSync(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Run {
  const r = spawnSync(cmd, args, { cwd, env: cleanEnv(env), encoding: "utf8", input: "" });
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

export function runAsync(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((res, rej) => {
    const child = spawn(cmd, args, { cwd, env: cleanEnv(env) });
    let out = "";
    let err = "";
    child.stdout.on("data", (b) => (out += b));
    child.stderr.on("data", (b) => (err += b));
    child.on("error", rej);
    child.on("close", (code) => res({ code: code ?? 1, stdout: out, stderr: err }));
    // A child that exits before reading (EPIPE) reports through its exit status, not by killing the test.
    child.stdin.on("error", () => {});
    child.stdin.end();
  });
}

export function git(cwd: string, ...args: string[]): string {
  const r = runSync("git", args, cwd, GIT_ID);
  if (r.code !== 0) throw new Error(`git ${args.join(" ")} in ${cwd} failed: ${r.stderr}`);
  return r.stdout.trim();
}

export const T0 = Date.parse("2026-03-01T09:00:00.000Z");

export class World {
  readonly root: string;
  readonly A: string;
  readonly B: string;
  readonly R: string;
  readonly T: string;
  readonly Rt: string;
  readonly xdgA: string;
  readonly xdgT: string;
  now = T0;
  /** How far the clock moves at each step. */
  tick = 1000;
  /** The mcp server's clock: HANDOFF_NOW is read once, when it starts. */
  mcpNow = T0;
  mcp: McpHandle | null = null;
  /** Task ids made so far (some may be gone: update-ref -d). */
  tasks: string[] = [];
  /** Commits each task ref has pointed at, for moving one back. */
  history = new Map<string, string[]>();
  /** The shell lines of the steps so far, for a failure's report. */
  log: string[] = [];
  policyN = 0;
  taskN = 0;

  constructor(readonly seed: number, readonly useMcp: boolean, readonly remote: boolean) {
    this.root = tempDir("handoff-fuzz-");
    this.A = join(this.root, "A");
    this.B = join(this.root, "B");
    this.R = join(this.root, "R.git");
    this.T = join(this.root, "T");
    this.Rt = join(this.root, "Rt.git");
    this.xdgA = join(this.root, "xdg-a");
    this.xdgT = join(this.root, "xdg-t");
    mkdirSync(this.xdgA);
    mkdirSync(this.xdgT);
    git(this.root, "init", "-q", "-b", "main", this.A);
    writeFileSync(join(this.A, "README.md"), "fuzz\n");
    git(this.A, "add", "README.md");
    git(this.A, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "initial", "--date", "2026-03-01T08:00:00Z");
    if (remote) {
      git(this.root, "init", "-q", "--bare", "-b", "main", this.R);
      git(this.A, "remote", "add", "origin", this.R);
      // A second branch with a policy of its own, for origin/HEAD to name (the integration branch).
      git(this.A, "checkout", "-q", "-b", "dev");
      writeFileSync(join(this.A, ".handoff.yaml"), "mode: strict\nmax_concurrent: 2\n");
      git(this.A, "add", ".handoff.yaml");
      git(this.A, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "dev policy", "--date", "2026-03-01T08:00:00Z");
      git(this.A, "checkout", "-q", "main");
      git(this.A, "push", "-q", "origin", "main", "dev");
      git(this.root, "clone", "-q", this.R, this.B);
      this.log.push(`git init -b main A; (commit README.md); git init --bare -b main R.git; git -C A remote add origin R.git; git -C A push origin main; (branch dev with .handoff.yaml 'mode: strict, max_concurrent: 2', pushed); git clone R.git B`);
    } else this.log.push(`git init -b main A; (commit README.md)   (no sync remote)`);
  }

  get iso(): string {
    return new Date(this.now).toISOString();
  }

  env(agent: string, truth: boolean, at = this.now): NodeJS.ProcessEnv {
    return { HANDOFF_AGENT: agent, HANDOFF_NOW: new Date(at).toISOString(), XDG_CACHE_HOME: truth ? this.xdgT : this.xdgA };
  }

  cli(dir: string, agent: string, args: string[], truth = false, at = this.now): Run {
    return runSync(process.execPath, [CLI, ...args], dir, this.env(agent, truth, at));
  }

  cliAsync(dir: string, agent: string, args: string[], truth = false, at = this.now): Promise<Run> {
    return runAsync(process.execPath, [CLI, ...args], dir, this.env(agent, truth, at));
  }

  refs(dir: string): string {
    return git(dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/handoff/", "refs/handoff-remotes/", "refs/heads/");
  }

  async startMcp(): Promise<void> {
    if (!this.useMcp) return;
    if (this.mcp) await this.mcp.close();
    this.mcpNow = this.now;
    this.mcp = await overStdio(this.A, { agent: "m", env: { HANDOFF_NOW: this.iso, XDG_CACHE_HOME: this.xdgA } });
  }

  async close(): Promise<void> {
    if (this.mcp) await this.mcp.close();
    this.mcp = null;
  }

  /** The truth: A's copy with its caches gone (and R's copy, for a write that reaches the remote). */
  freshTruth(): void {
    this.settle();
    rmSync(this.T, { recursive: true, force: true });
    rmSync(this.Rt, { recursive: true, force: true });
    cpSync(this.A, this.T, { recursive: true, verbatimSymlinks: true });
    if (this.remote) cpSync(this.R, this.Rt, { recursive: true, verbatimSymlinks: true });
    stripCaches(this.T);
  }

  /** Runs fn with T at A's path and Rt at R's (A and R set aside), then puts them back. */
  swapped<X>(fn: () => X): X {
    const aside = join(this.root, "A.aside");
    const rAside = join(this.root, "R.aside");
    renameSync(this.A, aside);
    if (this.remote) renameSync(this.R, rAside);
    renameSync(this.T, this.A);
    if (this.remote) renameSync(this.Rt, this.R);
    try {
      return fn();
    } finally {
      // A packer the truth started works where R's path leads (GIT_DIR): done before R is back there.
      this.settle();
      renameSync(this.A, this.T);
      if (this.remote) renameSync(this.R, this.Rt);
      renameSync(aside, this.A);
      if (this.remote) renameSync(rAside, this.R);
    }
  }

  /**
   * Waits for the `git pack-refs --all` a listing of the remote by path starts in it, detached, once
   * it read many loose refs (path-remote.ts packRefsLater, as receive-pack's `gc --auto` would).
   * git readers and the tool's own read loose refs before packed-refs and miss nothing while it
   * packs; a copy of R taken meanwhile may hold the old packed-refs and not the loose refs deleted
   * since: a remote no process saw (HANDOFF_FUZZ_BULK=600 HANDOFF_FUZZ_SEED=1037, at times: the
   * truth's sync pushed 228 refs and took a task for deleted).
   */
  settle(): void {
    const deadline = Date.now() + 30_000;
    while (packersIn(this.root).length) {
      if (Date.now() > deadline) throw new Error(`git pack-refs still running in ${this.root} after 30 s`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }

  noteTip(id: string, ref = `refs/handoff/tasks/${id}`): void {
    const r = runSync("git", ["rev-parse", "-q", "--verify", ref], this.A, {});
    if (r.code !== 0) return;
    const tip = r.stdout.trim();
    const h = this.history.get(id) ?? [];
    if (h.at(-1) !== tip) h.push(tip);
    this.history.set(id, h);
  }
}


/** The pids of `git pack-refs` processes working under `root` (their folder, /proc; Linux). */
export function packersIn(root: string): number[] {
  const found: number[] = [];
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((p) => /^\d+$/.test(p));
  } catch {
    return found;
  }
  for (const pid of pids) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "latin1").startsWith("git\0pack-refs\0")) continue;
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (cwd === root || cwd.startsWith(`${root}/`)) found.push(Number(pid));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}
