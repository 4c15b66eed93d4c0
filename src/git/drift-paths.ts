// What an agent really changed, as git sees it: its branch's commits since a base, and the
// uncommitted changes in its worktree. Read-only; every revision is checked before git sees it.
import { isObjectId } from "../core/object-id.ts";
import { nameStatusPaths } from "./changed-paths.ts";
import { git } from "./run.ts";

/** A branch name from a record (another agent's data) that may become a revision. */
function validateBranchName(b: string): boolean {
  return b.length <= 200 && /^[A-Za-z0-9][A-Za-z0-9._\/-]*$/.test(b) && !b.includes("..") && !b.endsWith(".lock");
}

/** The commit a local branch points at, and that commit's committer time; null when there is none. */
export async function branchTip(cwd: string, branch: string): Promise<{ commit: string; at: Date } | null> {
  if (!validateBranchName(branch)) return null;
  const r = await git(["log", "-1", "--format=%H %ct", "--end-of-options", `refs/heads/${branch}`, "--"], { cwd });
  const [commit, secs] = r.stdout.trim().split(" ");
  if (r.code !== 0 || !commit || !isObjectId(commit)) return null;
  return { commit, at: new Date(Number(secs) * 1000) };
}

/** Paths that differ between `base` and `tip` (renames give both sides). */
export async function changedBetween(cwd: string, base: string, tip: string): Promise<string[]> {
  if (!isObjectId(base) || !isObjectId(tip) || base === tip) return [];
  const r = await git(["diff", "--name-status", "-M", "-z", "--no-ext-diff", "--end-of-options", base, tip, "--"], { cwd });
  return r.code === 0 ? nameStatusPaths(r.stdout) : [];
}

/** Uncommitted paths in a worktree (staged, unstaged, untracked); [] when it is not there. */
export async function uncommittedPaths(worktree: string): Promise<string[]> {
  const r = await git(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"], { cwd: worktree });
  if (r.code !== 0) return [];
  // "XY path\0" per entry.
  return r.stdout
    .split("\0")
    .filter((e) => e.length > 3)
    .map((e) => e.slice(3));
}
