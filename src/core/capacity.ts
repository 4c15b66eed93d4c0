// Capacity: how many tasks one agent holds at once. `max_concurrent` in the policy, or what the
// agent declared for itself (`session start --capacity N`, as a worker running several tasks
// will). A claim past it is refused unless asked for explicitly (`--over-capacity`). Pure.
import type { AgentRecord } from "./agent.ts";
import type { Refusal } from "./errors.ts";
import type { Task } from "./task.ts";
import { handoffCommand } from "./shell-quote.ts";

export function capacityOf(agent: AgentRecord | null, maxConcurrent: number): number {
  return agent?.capacity ?? maxConcurrent;
}

/**
 * What the capacity check and a claim's overlap advisory read of a claimed task (and a listing
 * sorts it by): a one-shot claim reads no more of the tasks held in packed-refs alone
 * (claimed-index.ts keeps these fields of them). A whole record is one.
 */
export type ClaimedTask = Pick<Task, "id" | "status" | "created_at" | "scope"> & { claim: Pick<NonNullable<Task["claim"]>, "agent" | "expires_at"> | null };

/** The tasks `agent` holds with a live claim, other than `except`. */
export function heldBy<T extends ClaimedTask>(tasks: readonly T[], agent: string, now: Date, except: string | null): T[] {
  return tasks.filter((t) => t.id !== except && t.status === "claimed" && t.claim?.agent === agent && Date.parse(t.claim.expires_at) > now.getTime());
}

export function capacityRefusal(tasks: readonly ClaimedTask[], agent: string, capacity: number, claiming: string | null, now: Date): Refusal | null {
  const held = heldBy(tasks, agent, now, claiming);
  if (held.length < capacity) return null;
  const ids = held.map((t) => t.id);
  return {
    code: "at_capacity",
    message: `${agent} already holds ${held.length} task${held.length === 1 ? "" : "s"} (${ids.join(", ")}) and its capacity is ${capacity}`,
    data: { agent, held: ids, capacity },
    suggestions: [
      { action: "work_elsewhere", detail: `finish or release one first: ${handoffCommand("done", ids[0]!)} / ${handoffCommand("release", ids[0]!)}` },
      { action: "retry", detail: "claim anyway: --over-capacity; or declare more: git handoff session start --objective ... --capacity N" },
    ],
  };
}
