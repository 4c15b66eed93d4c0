// What an agent really changed, as git sees it: its branch's commits since a base, and the
// uncommitted changes in its worktree. Read-only; every revision is checked before git sees it.
import { isObjectId } from "../core/object-id.ts";
import { nameStatusPaths } from "./changed-paths.ts";
import { git } from "./run.ts";

/** A worktree too large to read quickly counts as unread, not as a `status` that hangs. */
const READ_BOUND_MS = 5000;

export interface BranchTip {
  commit: string;
  /** The tip commit's committer time. */
  at: Date;
}

/** Every local branch's tip and its commit time, in one call. */
export async function branchTips(cwd: string): Promise<Map<string, BranchTip>> {
  const r = await git(["for-each-ref", "--format=%(objectname) %(committerdate:unix) %(refname)", "refs/heads/"], { cwd });
  const tips = new Map<string, BranchTip>();
  if (r.code !== 0) return tips;
  for (const line of r.stdout.split("\n")) {
    const [commit, secs, ref] = line.split(" ");
    if (!commit || !isObjectId(commit) || !ref?.startsWith("refs/heads/")) continue;
    tips.set(ref.slice("refs/heads/".length), { commit, at: new Date(Number(secs) * 1000) });
  }
  return tips;
}

/** Paths that differ between `base` and `tip` (renames give both sides). */
export async function changedBetween(cwd: string, base: string, tip: string): Promise<string[]> {
  if (!isObjectId(base) || !isObjectId(tip) || base === tip) return [];
  const r = await git(["diff", "--name-status", "-M", "-z", "--no-ext-diff", "--end-of-options", base, tip, "--"], { cwd, timeoutMs: READ_BOUND_MS });
  return r.code === 0 && !r.timedOut ? nameStatusPaths(r.stdout) : [];
}

/**
 * Uncommitted paths in a worktree (staged, unstaged, untracked; a file git ignores is not one);
 * [] when it is not there or git fails. Often another agent's worktree: no optional lock is taken,
 * so its own git commands never wait on ours. `only`: of these paths alone (relative, literal).
 */
export async function uncommittedPaths(worktree: string, only?: string[]): Promise<string[]> {
  if (only && !only.length) return [];
  const pathspec = only ? ["--", ...only.map((p) => `:(literal)${p}`)] : [];
  const r = await git(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", ...pathspec], { cwd: worktree, timeoutMs: READ_BOUND_MS, env: { GIT_OPTIONAL_LOCKS: "0" } });
  if (r.code !== 0 || r.timedOut) return [];
  // "XY path\0" per entry.
  return r.stdout
    .split("\0")
    .filter((e) => e.length > 3)
    .map((e) => e.slice(3));
}
