// What a text view of every open task reads of each record (status, the roster, the lease rows,
// drift): a one-shot view at 10,000 tasks parses 7,500 of them from its view file, so the file holds
// these fields only (store/record-cache-listing.ts), and the functions that build the view take
// this type: one that read another field would not compile.
import type { Task } from "./task.ts";

export const VIEW_TASK_FIELDS = ["id", "objective", "status", "scope", "claim", "attempts", "max_attempts", "updated_at", "after", "base", "handoffs", "review"] as const;

export type ViewTask = Pick<Task, (typeof VIEW_TASK_FIELDS)[number]>;

/** The record narrowed to what a view reads (a copy; the fields it does not have stay absent). */
export function viewTask(t: ViewTask): ViewTask {
  const out: Record<string, unknown> = {};
  for (const k of VIEW_TASK_FIELDS) if (t[k] !== undefined) out[k] = t[k];
  return out as ViewTask;
}
