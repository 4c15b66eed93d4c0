// git's own hooks: pre-commit checks the staged paths, pre-push the paths the pushed commits touch.
// The paths come from src/git/changed-paths.ts (renames count on both sides).
import { answerText, checkPaths, type PathAnswer } from "../core/check.ts";
import type { Verdict } from "../core/lease-policy.ts";
import { HandoffError } from "../core/errors.ts";
import { refComponentProblem } from "../core/ids.ts";
import { commitMessages, hasCommit, newCommits, pathsOfCommits, stagedPaths } from "../git/changed-paths.ts";
import { checkFences } from "../sync/fence.ts";
import { checkContext } from "../store/check-context.ts";
import { loadLeases } from "../store/lease-store.ts";
import type { Store } from "../store/store.ts";

export interface GitHookResult {
  verdict: Verdict;
  answers: PathAnswer[];
  text: string;
}

async function checkFor(store: Store, paths: string[]): Promise<GitHookResult> {
  const { set } = await loadLeases(store);
  const r = checkPaths(paths, set.leases, await checkContext(store));
  return { verdict: r.verdict, answers: r.answers, text: answerText(r.answers) };
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
    const known = remoteSha && !ZERO.test(remoteSha) && (await hasCommit(store.cwd, remoteSha));
    const revs = await newCommits(store.cwd, localSha, known ? { commit: remoteSha } : { remote });
    if (!revs.length) continue;
    allRevs.push(...revs);
    for (const p of await pathsOfCommits(store.cwd, revs)) if (!paths.includes(p)) paths.push(p);
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
  for (const message of await commitMessages(store.cwd, revs)) {
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
