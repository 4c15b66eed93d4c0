// Integrating one branch into another without ever leaving it half-merged: merge and squash are
// computed in memory (`git merge-tree --write-tree` + `git commit-tree`), rebase runs in a
// temporary worktree, and only a compare-and-swap `update-ref` (or a fast-forward of the worktree
// that has the branch checked out) moves the branch. git 2.39 has no `git replay`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isObjectId } from "../core/object-id.ts";
import type { MergeStrategy } from "../core/loop-record.ts";
import { firstLine, git, toolIdentityEnv } from "./run.ts";

export type Integration = { ok: true; commit: string } | { ok: false; conflicts: string[]; error: string | null };

function checkOid(...oids: string[]): void {
  for (const o of oids) if (!isObjectId(o)) throw new Error(`not an object id: ${JSON.stringify(String(o).slice(0, 80))}`);
}

export async function isAncestor(cwd: string, a: string, b: string): Promise<boolean> {
  checkOid(a, b);
  return (await git(["merge-base", "--is-ancestor", "--end-of-options", a, b], { cwd })).code === 0;
}

/**
 * The commit the branch at `onto` would move to so that it holds `tip`'s work since `base`, or the
 * conflicting paths. Nothing outside the object store changes (a rebase's temporary worktree is
 * removed either way).
 */
export async function integrationCommit(cwd: string, o: { strategy: MergeStrategy; onto: string; tip: string; base: string; message: string; agent: string }): Promise<Integration> {
  checkOid(o.onto, o.tip, o.base);
  if (o.tip === o.base || (await isAncestor(cwd, o.tip, o.onto))) return { ok: true, commit: o.onto };
  const env = toolIdentityEnv(o.agent);
  if (o.strategy === "rebase") return rebaseOnto(cwd, o.onto, o.tip, o.base, env);
  const r = await git(["merge-tree", "--write-tree", "--name-only", "--no-messages", "--end-of-options", o.onto, o.tip], { cwd });
  const lines = r.stdout.split("\n");
  const tree = lines[0] ?? "";
  if (r.code === 1 && isObjectId(tree)) return { ok: false, conflicts: [...new Set(lines.slice(1).filter((l) => l))], error: null };
  if (r.code !== 0 || !isObjectId(tree)) return { ok: false, conflicts: [], error: firstLine(r.stderr) || `git merge-tree exited ${r.code}` };
  const parents = o.strategy === "merge" ? ["-p", o.onto, "-p", o.tip] : ["-p", o.onto];
  const c = await git(["commit-tree", ...parents, "-m", o.message, tree], { cwd, env });
  if (c.code !== 0) return { ok: false, conflicts: [], error: `git commit-tree failed: ${firstLine(c.stderr)}` };
  return { ok: true, commit: c.stdout.trim() };
}

async function rebaseOnto(cwd: string, onto: string, tip: string, base: string, env: NodeJS.ProcessEnv): Promise<Integration> {
  if (await isAncestor(cwd, onto, tip)) return { ok: true, commit: tip }; // nothing to replay: a fast-forward
  const home = mkdtempSync(join(tmpdir(), "handoff-rebase-"));
  const dir = join(home, "worktree");
  try {
    const add = await git(["worktree", "add", "--quiet", "--detach", dir, tip], { cwd });
    if (add.code !== 0) return { ok: false, conflicts: [], error: `git worktree add failed: ${firstLine(add.stderr)}` };
    const r = await git(["-c", "core.hooksPath=/dev/null", "rebase", "--quiet", "--onto", onto, base], { cwd: dir, env });
    if (r.code !== 0) {
      const conflicted = await git(["diff", "--name-only", "--diff-filter=U"], { cwd: dir });
      await git(["rebase", "--abort"], { cwd: dir });
      const paths = conflicted.stdout.split("\n").filter((l) => l);
      return { ok: false, conflicts: paths, error: paths.length ? null : `git rebase failed: ${firstLine(r.stderr)}` };
    }
    const head = await git(["rev-parse", "HEAD"], { cwd: dir });
    return { ok: true, commit: head.stdout.trim() };
  } finally {
    await git(["worktree", "remove", "--force", dir], { cwd });
    rmSync(home, { recursive: true, force: true });
  }
}

/** The worktree that has `refs/heads/<branch>` checked out, or null. */
export async function worktreeOfBranch(cwd: string, branch: string): Promise<string | null> {
  const r = await git(["worktree", "list", "--porcelain"], { cwd });
  let path: string | null = null;
  for (const line of r.stdout.split("\n")) {
    if (line.startsWith("worktree ")) path = line.slice("worktree ".length);
    else if (line === `branch refs/heads/${branch}`) return path;
  }
  return null;
}

/** Paths with changes in a worktree (untracked files too unless told otherwise); null: not a worktree. */
export async function changedPaths(dir: string, opts: { untracked?: boolean } = {}): Promise<string[] | null> {
  const r = await git(["status", "--porcelain", "-z", `--untracked-files=${opts.untracked === false ? "no" : "normal"}`], { cwd: dir });
  if (r.code !== 0) return null;
  return r.stdout.split("\0").filter((l) => l.length > 3).map((l) => l.slice(3));
}

export type Move = { ok: true } | { ok: false; reason: "moved" | "dirty" | "failed"; message: string };

/**
 * Moves `refs/heads/<branch>` from `old` to `next`. When a worktree has it checked out, that
 * worktree must be clean and is fast-forwarded (next must descend from old); otherwise the ref
 * moves by compare-and-swap. Either way a branch that moved meanwhile is left alone.
 */
export async function moveBranch(cwd: string, branch: string, next: string, old: string): Promise<Move> {
  checkOid(next, old);
  const ref = `refs/heads/${branch}`;
  const wt = await worktreeOfBranch(cwd, branch);
  if (wt) {
    const head = await git(["rev-parse", "HEAD"], { cwd: wt });
    if (head.stdout.trim() !== old) return { ok: false, reason: "moved", message: `${branch} moved on meanwhile` };
    const dirty = await changedPaths(wt, { untracked: false });
    if (dirty === null || dirty.length) {
      return { ok: false, reason: "dirty", message: `${branch} is checked out in ${wt}, which has uncommitted changes (${(dirty ?? []).slice(0, 5).join(", ")})` };
    }
    const m = await git(["-c", "core.hooksPath=/dev/null", "merge", "--ff-only", "--quiet", "--end-of-options", next], { cwd: wt });
    if (m.code !== 0) return { ok: false, reason: "failed", message: `could not fast-forward ${wt}: ${firstLine(m.stderr) || firstLine(m.stdout)}` };
    return { ok: true };
  }
  const u = await git(["update-ref", "-m", "git-handoff loop", ref, next, old], { cwd });
  if (u.code !== 0) return { ok: false, reason: "moved", message: `${branch} moved on meanwhile (${firstLine(u.stderr)})` };
  return { ok: true };
}

/** A new branch at `base` checked out in a new worktree `dir` (an existing branch is reused). */
export async function addBranchWorktree(cwd: string, dir: string, branch: string, base: string): Promise<void> {
  const exists = (await git(["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`], { cwd })).code === 0;
  const r = await git(["worktree", "add", "--quiet", ...(exists ? [dir, branch] : ["-b", branch, dir, base])], { cwd });
  if (r.code !== 0) throw new Error(`git worktree add failed: ${firstLine(r.stderr)}`);
}

/**
 * Removes a worktree git knows (a clean one: callers check first); true when git removed it. When
 * git refuses (its `.git` file gone or damaged, say), the folder is removed first and git's record
 * of it pruned after: pruned while the folder was still there, the record stayed, and `git worktree
 * list` named a folder that was gone (the caller removes the folder either way).
 */
export async function dropWorktree(cwd: string, dir: string): Promise<boolean> {
  const r = await git(["worktree", "remove", "--force", dir], { cwd });
  if (r.code === 0) return true;
  rmSync(dir, { recursive: true, force: true });
  await git(["worktree", "prune"], { cwd });
  return false;
}

/** Deletes `refs/heads/<branch>`. */
export async function deleteBranch(cwd: string, branch: string): Promise<boolean> {
  const r = await git(["branch", "-D", "--quiet", "--end-of-options", branch], { cwd });
  return r.code === 0;
}

export async function branchTip(cwd: string, branch: string): Promise<string | null> {
  const r = await git(["rev-parse", "--verify", "--quiet", "--end-of-options", `refs/heads/${branch}^{commit}`], { cwd });
  return r.code === 0 ? r.stdout.trim() : null;
}

/** Pushes the branch to `remote` (a plain, non-forced push). */
export async function pushBranch(cwd: string, remote: string, branch: string): Promise<{ ok: boolean; message: string }> {
  const r = await git(["push", "--porcelain", "--no-verify", "--end-of-options", remote, `refs/heads/${branch}:refs/heads/${branch}`], { cwd, env: { GIT_TERMINAL_PROMPT: "0" }, timeoutMs: 120_000 });
  return { ok: r.code === 0, message: firstLine(r.stderr) || firstLine(r.stdout) };
}
