// git's own hooks: pre-commit checks the staged paths, pre-push the paths the pushed commits touch.
// Both read git's answers with -z (any file name survives) and check renames on both sides.
import { answerText, checkPaths, type PathAnswer } from "../core/check.ts";
import type { Verdict } from "../core/lease-policy.ts";
import { git } from "../git/run.ts";
import { loadLeases, loadPolicy } from "../store/lease-store.ts";
import type { Store } from "../store/store.ts";

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

export interface GitHookResult {
  verdict: Verdict;
  answers: PathAnswer[];
  text: string;
}

async function checkFor(store: Store, paths: string[]): Promise<GitHookResult> {
  const { set } = await loadLeases(store);
  const r = checkPaths(paths, set.leases, { agent: store.actor.agent, now: store.now(), policy: loadPolicy(store) });
  return { verdict: r.verdict, answers: r.answers, text: answerText(r.answers) };
}

/**
 * Staged paths. Inside a hook git exports GIT_INDEX_FILE (a temporary index for `commit -a` or
 * `commit <paths>`): this one call must see it, so it inherits the repository environment.
 */
export async function stagedPaths(cwd: string): Promise<string[]> {
  const r = await git(["diff", "--cached", "--name-status", "-M", "-z"], { cwd, inheritRepoEnv: true });
  if (r.code !== 0) throw new Error(`git diff --cached failed: ${r.stderr.trim().split("\n")[0]}`);
  return nameStatusPaths(r.stdout);
}

export async function preCommit(store: Store, cwd: string): Promise<GitHookResult> {
  return checkFor(store, await stagedPaths(cwd));
}

const ZERO = /^0+$/;

/** Paths touched by the commits a push would add, from git's pre-push stdin lines. */
export async function pushedPaths(store: Store, stdin: string, remote: string | undefined): Promise<string[]> {
  const paths: string[] = [];
  for (const line of stdin.split("\n")) {
    const [, localSha, , remoteSha] = line.trim().split(/\s+/);
    if (!localSha || ZERO.test(localSha)) continue; // a deletion pushes no content
    const range =
      remoteSha && !ZERO.test(remoteSha) && (await git(["cat-file", "-e", `${remoteSha}^{commit}`], { cwd: store.cwd })).code === 0
        ? [localSha, `^${remoteSha}`]
        : [localSha, "--not", remote ? `--remotes=${remote}` : "--remotes"];
    const revs = await git(["rev-list", ...range], { cwd: store.cwd });
    if (revs.code !== 0) throw new Error(`git rev-list failed: ${revs.stderr.trim().split("\n")[0]}`);
    if (!revs.stdout.trim()) continue;
    const diff = await git(["diff-tree", "--stdin", "-r", "-z", "--name-status", "-M", "--root", "--no-commit-id"], {
      cwd: store.cwd,
      input: revs.stdout,
    });
    if (diff.code !== 0) throw new Error(`git diff-tree failed: ${diff.stderr.trim().split("\n")[0]}`);
    for (const p of nameStatusPaths(diff.stdout)) if (!paths.includes(p)) paths.push(p);
  }
  return paths;
}

/** Only exclusive leases of others stop a push; what the mode makes of them decides. */
export async function prePush(store: Store, stdin: string, remote: string | undefined): Promise<GitHookResult> {
  const r = await checkFor(store, await pushedPaths(store, stdin, remote));
  // In strict mode a shared lease also answers deny; a push is refused only over exclusive ones.
  const denied = r.answers.filter((a) => a.verdict === "deny" && a.holders.some((h) => h.exclusive));
  return { verdict: denied.length ? "deny" : "ok", answers: r.answers, text: answerText(denied) };
}
