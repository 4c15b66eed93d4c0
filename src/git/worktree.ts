// Throwaway worktrees for running a task: detached at a commit, removed afterwards.
import { firstLine, git } from "./run.ts";

/** Whether `rev` names a commit this repository has. */
export async function hasCommit(cwd: string, rev: string): Promise<boolean> {
  if (!/^[0-9a-f]{40,64}$/.test(rev) && !/^[A-Za-z0-9][A-Za-z0-9._\/-]*$/.test(rev)) return false;
  const r = await git(["rev-parse", "--verify", "--quiet", "--end-of-options", `${rev}^{commit}`], { cwd });
  return r.code === 0;
}

export async function addDetachedWorktree(cwd: string, dir: string, commit: string): Promise<void> {
  const r = await git(["worktree", "add", "--quiet", "--detach", dir, commit], { cwd });
  if (r.code !== 0) throw new Error(`git worktree add failed: ${firstLine(r.stderr)}`);
}

export async function removeWorktree(cwd: string, dir: string): Promise<void> {
  await git(["worktree", "remove", "--force", dir], { cwd });
}
