// What the repository policy is read from: which branch integrates everyone's work, its tip, and
// the committed `.handoff.yaml` there (or at an older commit of that branch).
import { git } from "./run.ts";

async function configValue(cwd: string, key: string): Promise<string | null> {
  const r = await git(["config", "--get", key], { cwd });
  const v = r.code === 0 ? r.stdout.trim() : "";
  return v || null;
}

/** The commit a local branch points at, or null. */
export async function branchTip(cwd: string, branch: string): Promise<string | null> {
  const r = await git(["rev-parse", "--verify", "--quiet", "--end-of-options", `refs/heads/${branch}^{commit}`], { cwd });
  return r.code === 0 ? r.stdout.trim() : null;
}

export interface IntegrationBranch {
  branch: string | null;
  /** How it was found: `git config handoff.integrationBranch`, the sync remote's HEAD, init.defaultBranch, ... */
  from: string;
}

/**
 * The integration branch: `git config handoff.integrationBranch`, else the sync remote's HEAD,
 * else `init.defaultBranch` (git's default `master` when unset) or `main` when such a branch
 * exists, else none.
 */
export async function findIntegrationBranch(cwd: string, remote: string | null): Promise<IntegrationBranch> {
  const configured = await configValue(cwd, "handoff.integrationBranch");
  if (configured) return { branch: configured, from: "git config handoff.integrationBranch" };
  if (remote) {
    const r = await git(["symbolic-ref", "--quiet", "--short", `refs/remotes/${remote}/HEAD`], { cwd });
    const name = r.code === 0 ? r.stdout.trim() : "";
    if (name.startsWith(`${remote}/`)) return { branch: name.slice(remote.length + 1), from: `${remote}/HEAD` };
  }
  const initDefault = await configValue(cwd, "init.defaultBranch");
  for (const [branch, from] of [[initDefault, "init.defaultBranch"], ["main", "the main branch"], ["master", "the master branch"]] as const) {
    if (branch && (await branchTip(cwd, branch))) return { branch, from };
  }
  return { branch: null, from: "none: set git config handoff.integrationBranch" };
}

/** The text of `path` at `commit`, or null when that commit has no such file. */
export async function fileAt(cwd: string, commit: string, path: string): Promise<string | null> {
  const r = await git(["cat-file", "blob", `${commit}:${path}`], { cwd });
  return r.code === 0 ? r.stdout : null;
}

/** Commits of `tip`'s first-parent history that changed `path`, newest first (bounded). */
export async function commitsTouching(cwd: string, tip: string, path: string, limit: number): Promise<string[]> {
  const r = await git(["log", "--first-parent", "--format=%H", `-n${limit}`, tip, "--", path], { cwd });
  return r.code === 0 ? r.stdout.split("\n").filter(Boolean) : [];
}
