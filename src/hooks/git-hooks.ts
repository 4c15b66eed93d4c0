// git's own hooks: pre-commit checks the staged paths, pre-push the paths the pushed commits touch.
// Both read git's answers with -z (any file name survives) and check renames on both sides.
import { answerText, checkPaths, type PathAnswer } from "../core/check.ts";
import type { Verdict } from "../core/lease-policy.ts";
import { HandoffError } from "../core/errors.ts";
import { refComponentProblem } from "../core/ids.ts";
import { git } from "../git/run.ts";
import { checkFences } from "../store/fence.ts";
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
  return (await pushedWork(store, stdin, remote)).paths;
}

/** The commits a push would add (from git's pre-push stdin lines) and the paths they touch. */
async function pushedWork(store: Store, stdin: string, remote: string | undefined): Promise<{ revs: string[]; paths: string[] }> {
  const paths: string[] = [];
  const allRevs: string[] = [];
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
    allRevs.push(...revs.stdout.trim().split("\n"));
    const diff = await git(["diff-tree", "--stdin", "-r", "-z", "--name-status", "-M", "--root", "--no-commit-id"], {
      cwd: store.cwd,
      input: revs.stdout,
    });
    if (diff.code !== 0) throw new Error(`git diff-tree failed: ${diff.stderr.trim().split("\n")[0]}`);
    for (const p of nameStatusPaths(diff.stdout)) if (!paths.includes(p)) paths.push(p);
  }
  return { revs: allRevs, paths };
}

/**
 * Which task grants the pushed work was done under: commit trailers `Handoff-Task: <id>` and,
 * optionally, `Handoff-Fence: <n>`. The newest commit naming a task decides its fence.
 */
async function pushedTaskGrants(store: Store, revs: string[]): Promise<Map<string, number | undefined>> {
  const grants = new Map<string, number | undefined>();
  if (!revs.length) return grants;
  const log = await git(["log", "--no-walk=unsorted", "--stdin", "--format=%B%x00"], { cwd: store.cwd, input: revs.join("\n") + "\n" });
  if (log.code !== 0) throw new Error(`git log failed: ${log.stderr.trim().split("\n")[0]}`);
  for (const message of log.stdout.split("\0")) {
    const task = /^Handoff-Task:\s*(\S+)\s*$/im.exec(message)?.[1];
    if (!task || grants.has(task)) continue;
    const fence = /^Handoff-Fence:\s*(\d+)\s*$/im.exec(message)?.[1];
    grants.set(task, fence === undefined ? undefined : Number(fence));
  }
  return grants;
}

/**
 * Fencing: work for a task may be pushed only by the agent that still holds its lease (under the
 * fence the work names). A takeover after expiry is caught here, naming the current holder.
 */
async function fenceRefusals(store: Store, revs: string[]): Promise<string[]> {
  const problems: string[] = [];
  for (const [task, fence] of await pushedTaskGrants(store, revs)) {
    if (refComponentProblem(task)) continue; // not one of ours: nothing to fence
    try {
      const { verdicts } = await checkFences(store, [task], fence);
      for (const v of verdicts) if (v.refusal) problems.push(v.refusal.message);
    } catch (e) {
      if (!(e instanceof HandoffError) || e.code !== "not_found") throw e;
    }
  }
  return problems;
}

/** Only exclusive leases of others stop a push; what the mode makes of them decides. */
export async function prePush(store: Store, stdin: string, remote: string | undefined): Promise<GitHookResult> {
  const work = await pushedWork(store, stdin, remote);
  const r = await checkFor(store, work.paths);
  // In strict mode a shared lease also answers deny; a push is refused only over exclusive ones.
  const denied = r.answers.filter((a) => a.verdict === "deny" && a.holders.some((h) => h.exclusive));
  const fenced = await fenceRefusals(store, work.revs);
  const text = [answerText(denied), ...fenced.map((m) => `deny: ${m}`)].filter(Boolean).join("\n");
  return { verdict: denied.length || fenced.length ? "deny" : "ok", answers: r.answers, text };
}
