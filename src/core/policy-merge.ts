// One policy per repository: the `.handoff.yaml` committed on the integration branch. A worktree's
// own file may only make it stricter, so no branch can switch enforcement off for everyone: `mode`
// only upwards (advisory < balanced < strict), `ignore` only a subset, `exclusive_scope` only on,
// `review.allow_self` only off.
// Every other key is repository policy; a worktree's different value is set aside, and said so.
import type { ConfigFile, LeaseMode } from "./config.ts";

const RANK: Record<LeaseMode, number> = { advisory: 0, balanced: 1, strict: 2 };

export interface MergedPolicy {
  file: ConfigFile;
  /** What the worktree file asked for and did not get, one line each. */
  setAside: string[];
}

export function stricterOnly(repo: ConfigFile, local: ConfigFile, where: string): MergedPolicy {
  const file: ConfigFile = { ...repo };
  const setAside: string[] = [];
  const repoMode = repo.mode ?? "balanced";
  if (local.mode !== undefined) {
    if (RANK[local.mode] >= RANK[repoMode]) file.mode = local.mode;
    else setAside.push(`mode: ${local.mode} (the repository's is ${repoMode}, at ${where}; a worktree may only be stricter)`);
  }
  if (local.ignore !== undefined) {
    const allowed = new Set(repo.ignore ?? []);
    const extra = local.ignore.filter((g) => !allowed.has(g));
    file.ignore = local.ignore.filter((g) => allowed.has(g));
    if (extra.length) setAside.push(`ignore: ${extra.join(", ")} (not ignored by the repository's policy at ${where})`);
  }
  if (local.exclusive_scope !== undefined) {
    if (local.exclusive_scope || !repo.exclusive_scope) file.exclusive_scope = local.exclusive_scope || !!repo.exclusive_scope;
    else setAside.push(`exclusive_scope: false (the repository's is true, at ${where})`);
  }
  if (local.review?.allow_self !== undefined) {
    if (!local.review.allow_self) file.review = { ...repo.review, allow_self: false };
    else if (!repo.review?.allow_self) setAside.push(`review.allow_self: true (not allowed by the repository's policy at ${where})`);
  }
  const handled = new Set(["mode", "ignore", "exclusive_scope", "review", "version"]);
  for (const key of Object.keys(local) as (keyof ConfigFile)[]) {
    if (handled.has(key)) continue;
    if (JSON.stringify(local[key]) !== JSON.stringify(repo[key])) setAside.push(`${key} (repository policy, set at ${where})`);
  }
  return { file, setAside };
}
