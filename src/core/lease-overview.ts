// The file-lease section of `status`: every live lease, and the ones that should not be there
// flagged (their task is finished or not held by them, or their holder is gone). Another agent's
// lease expired by this clock that stands for the takeover grace (clock skew) is live for this
// view as for a write (lease.ts isLeaseLiveFor), marked with when it stops standing. Pure.
import { classifyAgent, type AgentRecord, type AgentThresholds } from "./agent.ts";
import { claimLive, type Viewer } from "./clock-skew.ts";
import { graceUntil, isLeaseLiveFor, type Lease } from "./lease.ts";
import { isFinal } from "./task.ts";
import { textOrder } from "./text-order.ts";
import type { ViewTask } from "./view-task.ts";
import { asViewTasks, type ViewTasks } from "./view-tasks.ts";

export type LeaseFlag = "task_finished" | "task_not_held" | "holder_gone";

export interface LeaseRow {
  pattern: string;
  agent: string;
  task: string | null;
  exclusive: boolean;
  expires_at: string;
  expires_in_ms: number;
  flags: LeaseFlag[];
  /** Expired by this clock, but standing for the takeover grace until then (another agent's, through a sync remote). */
  grace_until?: string;
}

/** `graceMs`: how long past its expiry the holder's claim still stands (the takeover grace, for another agent's lease). */
export function leaseFlags(l: Lease, tasks: Map<string, ViewTask>, agents: Map<string, AgentRecord>, now: Date, t: AgentThresholds, graceMs = 0): LeaseFlag[] {
  const flags: LeaseFlag[] = [];
  const task = l.task ? tasks.get(l.task) : undefined;
  if (task && (isFinal(task.status) || task.status === "review")) flags.push("task_finished");
  else if (task && !(task.status === "claimed" && task.claim?.agent === l.agent && claimLive(task.claim.expires_at, graceMs, now))) flags.push("task_not_held");
  const holder = agents.get(l.agent);
  if (holder && classifyAgent(holder, now, t) === "disconnected") flags.push("holder_gone");
  return flags;
}

/** `viewer`: whose status it is, and the grace other agents' leases stand for in it. */
export function leaseRows(leases: Lease[], tasks: readonly ViewTask[] | ViewTasks, agents: AgentRecord[], now: Date, t: AgentThresholds, viewer: Viewer): LeaseRow[] {
  // Only the tasks leases name are looked up: a map of every task cost more than the rows (7,500 at 10,000 tasks).
  const named = new Set<string>();
  for (const l of leases) if (l.task !== null) named.add(l.task);
  const byTask = new Map<string, ViewTask>();
  if (named.size) {
    const v = asViewTasks(tasks);
    for (let i = 0; i < v.length; i++) if (named.has(v.ids[i]!)) byTask.set(v.ids[i]!, v.record(i));
  }
  const byAgent = new Map(agents.map((a) => [a.agent, a]));
  const { agent, graceMs } = viewer;
  return leases
    .filter((l) => isLeaseLiveFor(l, now, agent, graceMs))
    .map((l) => {
      const until = graceUntil(l, now, agent, graceMs);
      return {
        pattern: l.pattern,
        agent: l.agent,
        task: l.task,
        exclusive: l.exclusive,
        expires_at: l.expires_at,
        expires_in_ms: Date.parse(l.expires_at) - now.getTime(),
        flags: leaseFlags(l, byTask, byAgent, now, t, l.agent === agent ? 0 : graceMs),
        ...(until ? { grace_until: until } : {}),
      };
    })
    .sort((a, b) => textOrder(a.agent, b.agent) || textOrder(a.pattern, b.pattern));
}

const FLAG_TEXT: Record<LeaseFlag, string> = {
  task_finished: "its task is finished",
  task_not_held: "its task is not held by it",
  holder_gone: "its holder is gone",
};

export function flagText(flags: LeaseFlag[]): string {
  return flags.map((f) => FLAG_TEXT[f]).join(", ");
}
