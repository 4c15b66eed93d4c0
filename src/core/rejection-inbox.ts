// A rejected review reaches its author: in `inbox` and in the SessionStart context, until the task
// is submitted again or finished. The reviewer's reason is another agent's text. Pure.
import { isFinal, type Task } from "./task.ts";
import { textOrder } from "./text-order.ts";

export interface Rejection {
  kind: "rejection";
  task: string;
  objective: string;
  by: string;
  at: string;
  reason: string | null;
  /** The task's state now: todo (free to claim again) or claimed (by whom). */
  status: Task["status"];
  holder: string | null;
}

export function rejectionsFor(agent: string, tasks: Task[]): Rejection[] {
  const out: Rejection[] = [];
  for (const t of tasks) {
    const d = t.review?.decision;
    if (!d || d.verdict !== "rejected" || t.review!.submitted_by !== agent || isFinal(t.status) || t.status === "review") continue;
    out.push({ kind: "rejection", task: t.id, objective: t.objective, by: d.by, at: d.at, reason: d.reason, status: t.status, holder: t.claim?.agent ?? null });
  }
  return out.sort((a, b) => textOrder(a.at, b.at));
}
