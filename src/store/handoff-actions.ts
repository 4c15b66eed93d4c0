// Handoffs under compare-and-swap: stored in the task record, one commit on the task ref each, so
// `git log refs/handoff/tasks/<id>` shows them; acknowledgements likewise.
import type { DiffSummary } from "../core/diff-summary.ts";
import { fail, HandoffError } from "../core/errors.ts";
import { ackHandoff, handoffInputProblem, inboxFor, parseHandoffId, recordHandoff, type InboxEntry } from "../core/handoff.ts";
import type { Handoff } from "../core/handoff-record.ts";
import { validateAgentId, validateTaskId } from "../core/ids.ts";
import type { Task } from "../core/task.ts";
import { rejectionsFor, type Rejection } from "../core/rejection-inbox.ts";
import { resolveCommit } from "../git/commits.ts";
import { diffSummary, mergeBase } from "../git/diff.ts";
import { worktreeHead } from "./worktree-head.ts";
import { loadAgent } from "./agent-store.ts";
import type { Store } from "./store.ts";
import { listTasks, loadTask } from "./task-store.ts";
import { mutateTaskFollowed as mutateTask } from "./task-lease-store.ts";

export interface HandoffOptions {
  to?: string;
  commit?: string;
  contract?: string;
  verify?: string;
  questions?: string[];
  note?: string;
}

/**
 * What a task's work changed: from the base recorded when it was claimed, else from the merge
 * base with the integration branch. Null when there is no base to compare with.
 */
export async function taskDiff(store: Store, task: Task, commit: string): Promise<DiffSummary | null> {
  const integration = store.config.integrationBranch;
  const base = task.base ?? (integration ? await mergeBase(store.cwd, integration, commit) : null);
  if (!base) return null;
  try {
    return await diffSummary(store.cwd, base, commit);
  } catch {
    return null; // a base from another clone that this one lacks: no summary rather than no handoff
  }
}

export async function handoff(store: Store, id: string, o: HandoffOptions): Promise<{ task: Task; handoff: Handoff }> {
  validateTaskId(id);
  const text = { contract: o.contract ?? null, verify: o.verify ?? null, questions: o.questions ?? [], note: o.note ?? null };
  const problem = handoffInputProblem(text);
  if (problem) fail("invalid_input", problem);
  const to = o.to !== undefined ? validateAgentId(o.to) : null;
  if (to && !(await loadAgent(store, to))) {
    fail("not_found", `no agent ${to}: it has not started a session`, { agent: to }, [
      { action: "fix_input", detail: "list agents: git handoff agents (or leave out --to: whoever claims a dependent task gets it)" },
    ]);
  }
  const { task } = await loadTask(store, id);
  let commit: string | null = null;
  if (o.commit !== undefined) commit = await resolveCommit(store.cwd, o.commit);
  else if (task.result?.commit) commit = task.result.commit;
  else if (store.repo.workTree) commit = await worktreeHead(store);
  const diff = commit ? await taskDiff(store, task, commit) : null;
  const t = await mutateTask(store, id, (cur, ctx) => recordHandoff(cur, { to, commit, diff, ...text }, ctx));
  return { task: t, handoff: t.handoffs!.at(-1)! };
}

export async function inbox(store: Store, agent = store.actor.agent): Promise<{ entries: InboxEntry[]; rejections: Rejection[]; problems: string[] }> {
  const { tasks, problems } = await listTasks(store, { settled: false });
  return { entries: inboxFor(agent, tasks, store.now()), rejections: rejectionsFor(agent, tasks), problems };
}

export async function ack(store: Store, handoffId: string): Promise<Task> {
  const parsed = parseHandoffId(handoffId);
  if (!parsed) fail("invalid_input", `invalid handoff id ${JSON.stringify(handoffId.slice(0, 80))}: handoff ids look like <task>#<n>, e.g. api#1`);
  validateTaskId(parsed.task);
  try {
    return await mutateTask(store, parsed.task, (t, ctx) => ackHandoff(t, handoffId, ctx, { allowSelf: store.config.reviewAllowSelf }));
  } catch (e) {
    if (e instanceof HandoffError && e.code === "not_found" && !e.refusal.data?.handoff) {
      fail("not_found", `no handoff ${handoffId}: there is no task ${parsed.task}`, { handoff: handoffId });
    }
    throw e;
  }
}
