import { isObjectId } from "../core/object-id.ts";
import { firstLine, git } from "./run.ts";

export type MergePreview = { ok: true; conflicts: string[] } | { ok: false; error: string };

/**
 * Merges two commits in memory (`git merge-tree --write-tree`, git >= 2.38): no worktree or index
 * is touched. Exit 0 is a clean merge, exit 1 with a tree id on the first line a conflicted one
 * (the conflicted paths follow); anything else is an error (unrelated histories, bad revision).
 */
export async function previewMerge(cwd: string, a: string, b: string): Promise<MergePreview> {
  if (!isObjectId(a) || !isObjectId(b)) return { ok: false, error: `not an object id: ${JSON.stringify((isObjectId(a) ? b : a).slice(0, 80))}` };
  const r = await git(["merge-tree", "--write-tree", "--name-only", "--no-messages", "--end-of-options", a, b], { cwd });
  const lines = r.stdout.split("\n");
  const treeLine = /^[0-9a-f]{40,64}$/.test(lines[0] ?? "");
  if (r.code === 0 && treeLine) return { ok: true, conflicts: [] };
  if (r.code === 1 && treeLine) {
    const paths = [...new Set(lines.slice(1).filter((l) => l.length > 0))];
    return { ok: true, conflicts: paths };
  }
  return { ok: false, error: firstLine(r.stderr) || `git merge-tree exited ${r.code}` };
}

/** A branch's commit, or null when it does not exist. */
export async function branchCommit(cwd: string, branch: string): Promise<string | null> {
  const r = await git(["rev-parse", "--verify", "--quiet", "--end-of-options", `refs/heads/${branch}^{commit}`], { cwd });
  return r.code === 0 ? r.stdout.trim() : null;
}
