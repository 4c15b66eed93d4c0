import { settle } from "./task-ops.ts";
import type { Actor } from "./identity.ts";
import type { Task, TaskStatus } from "./task.ts";

export interface HeldTask {
  task: string;
  objective: string;
  agent: string;
  expires_at: string;
  expires_in_ms: number;
  fence: number;
  worktree: string | null;
  branch: string | null;
  scope: Actor["scope"];
}

export interface Overview {
  at: string;
  counts: Record<TaskStatus, number>;
  /** Live claims grouped by agent. */
  holders: { agent: string; tasks: HeldTask[] }[];
  /** Live claims ending within `soonMs`. */
  expiring_soon: HeldTask[];
  /** Claims whose lease ran out and that nobody has taken over yet (lazy expiry pending). */
  expired: HeldTask[];
}

/** The first bird's-eye view: tasks by state, who holds what, what expires soon. */
export function buildOverview(stored: Task[], now: Date, soonMs = 5 * 60_000): Overview {
  const counts: Record<TaskStatus, number> = { todo: 0, claimed: 0, done: 0, failed: 0, cancelled: 0, review: 0 };
  const byAgent = new Map<string, HeldTask[]>();
  const expiring: HeldTask[] = [];
  const expired: HeldTask[] = [];
  const ctx = { now, actor: { agent: "", worktree: null, branch: null, scope: "primary" as const } };
  for (const task of stored) {
    const settled = settle(task, ctx).record;
    counts[settled.status]++;
    const claim = task.claim;
    if (!claim || task.status !== "claimed") continue;
    const held: HeldTask = {
      task: task.id,
      objective: task.objective,
      agent: claim.agent,
      expires_at: claim.expires_at,
      expires_in_ms: Date.parse(claim.expires_at) - now.getTime(),
      fence: claim.fence,
      worktree: claim.worktree,
      branch: claim.branch,
      scope: claim.scope,
    };
    if (held.expires_in_ms <= 0) {
      expired.push(held);
      continue;
    }
    byAgent.set(claim.agent, [...(byAgent.get(claim.agent) ?? []), held]);
    if (held.expires_in_ms <= soonMs) expiring.push(held);
  }
  const holders = [...byAgent.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([agent, tasks]) => ({ agent, tasks }));
  expiring.sort((a, b) => a.expires_in_ms - b.expires_in_ms);
  return { at: now.toISOString(), counts, holders, expiring_soon: expiring, expired };
}
