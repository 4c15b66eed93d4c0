// The paths a commit or a push would change, as git reports them with -z (any file name survives);
// renames and copies contribute both sides.

import { isObjectId } from "../core/object-id.ts";
import { git } from "./run.ts";

/** Paths from `--name-status -z` output; a rename or copy contributes its old and new path. */
export function nameStatusPaths(out: string): string[] {
  const parts = out.split("\0");
  const paths: string[] = [];
  for (let i = 0; i < parts.length; ) {
    const status = parts[i++];
    if (!status) continue;
    const n = status.startsWith("R") || status.startsWith("C") ? 2 : 1;
    for (let k = 0; k < n && i < parts.length; k++) {
      const p = parts[i++]!;
      if (p && !paths.includes(p)) paths.push(p);
    }
  }
  return paths;
}

function check(r: { code: number; stderr: string }, what: string): void {
  if (r.code !== 0) throw new Error(`${what} failed: ${r.stderr.trim().split("\n")[0]}`);
}

/**
 * Staged paths. Inside a hook git exports GIT_INDEX_FILE (a temporary index for `commit -a` or
 * `commit <paths>`): this one call must see it, so it inherits the repository environment.
 */
export async function stagedPaths(cwd: string): Promise<string[]> {
  const r = await git(["diff", "--cached", "--name-status", "-M", "-z"], { cwd, inheritRepoEnv: true });
  check(r, "git diff --cached");
  return nameStatusPaths(r.stdout);
}

export async function hasCommit(cwd: string, oid: string): Promise<boolean> {
  if (!isObjectId(oid)) return false;
  return (await git(["cat-file", "-e", "--end-of-options", `${oid}^{commit}`], { cwd })).code === 0;
}

/** Commits reachable from `tip` and not from `exclude` (an object id), or not from any remote-tracking branch. */
export async function newCommits(cwd: string, tip: string, exclude: { commit: string } | { remote: string | undefined }): Promise<string[]> {
  // Object ids from git's pre-push input; the remote (a name or a URL) is glued to its option.
  if (!isObjectId(tip) || ("commit" in exclude && !isObjectId(exclude.commit))) throw new Error("git rev-list refused: not an object id");
  const range = "commit" in exclude ? [tip, `^${exclude.commit}`] : [tip, "--not", exclude.remote ? `--remotes=${exclude.remote}` : "--remotes"];
  const r = await git(["rev-list", ...range], { cwd });
  check(r, "git rev-list");
  return r.stdout.trim() ? r.stdout.trim().split("\n") : [];
}

/** Every path these commits change. */
export async function pathsOfCommits(cwd: string, revs: string[]): Promise<string[]> {
  if (!revs.length) return [];
  if (!revs.every(isObjectId)) throw new Error("git diff-tree refused: not an object id");
  const r = await git(["diff-tree", "--stdin", "-r", "-z", "--name-status", "-M", "--root", "--no-commit-id"], { cwd, input: revs.join("\n") + "\n" });
  check(r, "git diff-tree");
  return nameStatusPaths(r.stdout);
}

/** The full messages of these commits, in the order given. */
export async function commitMessages(cwd: string, revs: string[]): Promise<string[]> {
  if (!revs.length) return [];
  if (!revs.every(isObjectId)) throw new Error("git log refused: not an object id");
  const r = await git(["log", "--no-walk=unsorted", "--stdin", "--format=%B%x00"], { cwd, input: revs.join("\n") + "\n" });
  check(r, "git log");
  return r.stdout.split("\0");
}
