// Throwaway worktrees for running a task: detached at a commit, removed afterwards.
import { firstLine, git, toolIdentityEnv } from "./run.ts";

/** Whether `rev` names a commit this repository has. */
export async function hasCommit(cwd: string, rev: string): Promise<boolean> {
  return (await commitOf(cwd, rev)) !== null;
}

/** The commit `rev` (an object id or a plain ref name, nothing git would read as an expression) names here, or null. */
export async function commitOf(cwd: string, rev: string): Promise<string | null> {
  if (!/^[0-9a-f]{40,64}$/.test(rev) && !/^[A-Za-z0-9][A-Za-z0-9._\/-]*$/.test(rev)) return null;
  return revParse(cwd, rev);
}

export async function revParse(cwd: string, rev: string): Promise<string | null> {
  const r = await git(["rev-parse", "--verify", "--quiet", "--end-of-options", `${rev}^{commit}`], { cwd });
  return r.code === 0 ? r.stdout.trim() : null;
}

export async function addDetachedWorktree(cwd: string, dir: string, commit: string): Promise<void> {
  const r = await git(["worktree", "add", "--quiet", "--detach", dir, commit], { cwd });
  if (r.code !== 0) throw new Error(`git worktree add failed: ${firstLine(r.stderr)}`);
}

export async function removeWorktree(cwd: string, dir: string): Promise<void> {
  await git(["worktree", "remove", "--force", dir], { cwd });
}

/**
 * Commits whatever the command left in the worktree (tracked or not, as `git add -A` sees it) and
 * returns HEAD, which is `base` itself when nothing changed.
 */
export async function commitWorktree(dir: string, message: string, agent: string): Promise<string> {
  const add = await git(["add", "-A"], { cwd: dir });
  if (add.code !== 0) throw new Error(`git add failed: ${firstLine(add.stderr)}`);
  const staged = await git(["diff", "--cached", "--quiet"], { cwd: dir });
  if (staged.code === 1) {
    const c = await git(["commit", "-q", "--no-verify", "-m", message], { cwd: dir, env: toolIdentityEnv(agent) });
    if (c.code !== 0) throw new Error(`git commit failed: ${firstLine(c.stderr)}`);
  }
  const head = await git(["rev-parse", "HEAD"], { cwd: dir });
  return head.stdout.trim();
}

/** Points `refs/heads/<branch>` at `commit` on the remote (or, without one, here). */
export async function publishBranch(cwd: string, remote: string | null, commit: string, branch: string): Promise<void> {
  const r = remote
    ? await git(["push", "--porcelain", "--no-verify", "--end-of-options", remote, `+${commit}:refs/heads/${branch}`], { cwd, env: { GIT_TERMINAL_PROMPT: "0" } })
    : await git(["update-ref", `refs/heads/${branch}`, commit], { cwd });
  if (r.code !== 0) throw new Error(`could not publish branch ${branch}: ${firstLine(r.stderr)}`);
}
