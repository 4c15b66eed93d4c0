// Which file leases have outlived their reason: the task they serve is finished (or gone from the
// live set), or their holder has disconnected or ended its session. The dashboard flags them and
// only these may be force-released (lease-reclaim.ts).
import { isFinal, type Task } from "./task.ts";
import type { Lease } from "./lease.ts";

export interface AgentLike {
  status: "active" | "stale" | "disconnected";
  ended_at: string | null;
}

export interface LeaseFlag {
  kind: "task_finished" | "holder_gone";
  detail: string;
}

export function isAgentGone(a: AgentLike | undefined): boolean {
  return !!a && (a.status === "disconnected" || a.ended_at !== null);
}

export function flagLease(lease: Lease, facts: { tasks: Map<string, Pick<Task, "id" | "status">>; agents: Map<string, AgentLike> }): LeaseFlag | null {
  if (lease.task) {
    const t = facts.tasks.get(lease.task);
    if (!t) return { kind: "task_finished", detail: `task ${lease.task} is no longer live` };
    if (isFinal(t.status)) return { kind: "task_finished", detail: `task ${lease.task} is ${t.status}` };
  }
  const a = facts.agents.get(lease.agent);
  if (a && isAgentGone(a)) return { kind: "holder_gone", detail: `${lease.agent} is ${a.ended_at !== null ? "ended" : a.status}` };
  return null;
}
