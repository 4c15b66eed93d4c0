// More test support for the task store: repos outside the temp folder (for scope tests), refs
// made by hand with git plumbing (corrupt state), and a native ref transaction held open.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import { cleanEnv, gitOut } from "./repo.ts";

const made: string[] = [];

function isUnder(path: string, dir: string): boolean {
  const real = realpathSync(dir);
  return path === real || path.startsWith(real.endsWith(sep) ? real : real + sep);
}

/**
 * A folder that is NOT under the system temp folder (so a repo there is `primary`, not
 * `ephemeral`): /var/tmp when it is outside tmpdir(), else next to this worktree.
 */
export function nonTempDir(prefix = "handoff-scope-"): string {
  const candidates = ["/var/tmp", resolve(import.meta.dirname, "../../..")];
  for (const base of candidates) {
    try {
      const dir = realpathSync(mkdtempSync(join(base, prefix)));
      if (isUnder(dir, tmpdir())) {
        rmSync(dir, { recursive: true, force: true });
        continue;
      }
      made.push(dir);
      return dir;
    } catch {
      /* not writable: try the next */
    }
  }
  throw new Error("no writable folder outside the temp folder");
}

/** A repo with one commit on `main`, inside `dir`. */
export function repoIn(dir: string): string {
  gitOut(dir, "init", "-q", "-b", "main");
  gitOut(dir, "commit", "-q", "--allow-empty", "-m", "initial");
  return dir;
}

export function cleanupFixtures(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}

function shIn(repo: string, args: string[], input: string): string {
  // sh() has no stdin; this small variant does.
  const r = spawnSync("git", args, {
    cwd: repo,
    env: cleanEnv({ GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" }),
    input,
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr}`);
  return r.stdout.trim();
}

export function blob(repo: string, text: string): string {
  return shIn(repo, ["hash-object", "-w", "--stdin"], text);
}

/** A commit whose tree holds `task.json` (and the format marker), made with plain plumbing. */
export function taskCommit(repo: string, taskJson: string, parent?: string): string {
  const json = blob(repo, taskJson);
  const format = blob(repo, "git-handoff 1\n");
  const tree = shIn(repo, ["mktree"], `100644 blob ${format}\tformat\n100644 blob ${json}\ttask.json\n`);
  return shIn(repo, ["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", "made by hand"], "");
}

/**
 * A native `git update-ref --stdin` transaction that has taken the lock of `ref` (start, update,
 * prepare) and holds it until `commit()` or `abort()`.
 */
export class HeldTransaction {
  private child: ChildProcessWithoutNullStreams;
  private out = "";
  private closed: Promise<number>;

  constructor(repo: string, ref: string, newOid: string, oldOid: string) {
    this.child = spawn("git", ["update-ref", "--stdin"], { cwd: repo, env: cleanEnv() });
    this.child.stdout.on("data", (b) => (this.out += b));
    this.child.stderr.on("data", (b) => (this.out += b));
    this.closed = new Promise((res) => this.child.on("close", (code) => res(code ?? 1)));
    this.child.stdin.write(`start\nupdate ${ref} ${newOid} ${oldOid}\nprepare\n`);
  }

  /** Resolves once git has answered `prepare: ok`, i.e. holds the lock. */
  async prepared(timeoutMs = 20_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!/prepare: ok/.test(this.out)) {
      if (Date.now() > until) throw new Error(`transaction not prepared: ${this.out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async commit(): Promise<number> {
    this.child.stdin.end("commit\n");
    return this.closed;
  }

  async abort(): Promise<number> {
    this.child.stdin.end("abort\n");
    return this.closed;
  }

  get output(): string {
    return this.out;
  }
}

export function lockFile(repo: string, ref: string): string {
  return join(dirname(join(gitOut(repo, "rev-parse", "--path-format=absolute", "--git-common-dir"), ref)), ref.split("/").at(-1)! + ".lock");
}
