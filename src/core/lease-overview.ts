// The file-lease section of `status`: every live lease, and the ones that should not be there
// flagged (their task is finished or not held by them, or their holder is gone). Pure.
import { classifyAgent, type AgentRecord, type AgentThresholds } from "./agent.ts";
import { isLeaseLive, type Lease } from "./lease.ts";
import { isFinal, type Task } from "./task.ts";
import { textOrder } from "./text-order.ts";

export type LeaseFlag = "task_finished" | "task_not_held" | "holder_gone";

export interface LeaseRow {
  pattern: string;
  agent: string;
  task: string | null;
  exclusive: boolean;
  expires_at: string;
  expires_in_ms: number;
  flags: LeaseFlag[];
}

export function leaseFlags(l: Lease, tasks: Map<string, Task>, agents: Map<string, AgentRecord>, now: Date, t: AgentThresholds): LeaseFlag[] {
  const flags: LeaseFlag[] = [];
  const task = l.task ? tasks.get(l.task) : undefined;
  if (task && (isFinal(task.status) || task.status === "review")) flags.push("task_finished");
  else if (task && !(task.status === "claimed" && task.claim?.agent === l.agent && Date.parse(task.claim.expires_at) > now.getTime())) flags.push("task_not_held");
  const holder = agents.get(l.agent);
  if (holder && classifyAgent(holder, now, t) === "disconnected") flags.push("holder_gone");
  return flags;
}

export function leaseRows(leases: Lease[], tasks: Task[], agents: AgentRecord[], now: Date, t: AgentThresholds): LeaseRow[] {
  const byTask = new Map(tasks.map((x) => [x.id, x]));
  const byAgent = new Map(agents.map((a) => [a.agent, a]));
  return leases
    .filter((l) => isLeaseLive(l, now))
    .map((l) => ({
      pattern: l.pattern,
      agent: l.agent,
      task: l.task,
      exclusive: l.exclusive,
      expires_at: l.expires_at,
      expires_in_ms: Date.parse(l.expires_at) - now.getTime(),
      flags: leaseFlags(l, byTask, byAgent, now, t),
    }))
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
