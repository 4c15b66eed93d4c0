// How views mark what the sync remote holds in a newer record format (sync/newer-refs.ts): this
// clone's copy may be stale and cannot be changed here. `--json` and MCP results carry
// newer_on_remote on each such record; lists whose shape is fixed (ready) say the rest beside it.
import type { BlockedEdge } from "../core/dependency-graph.ts";
import type { HeldTask, MatrixRow, Overview, StatusView } from "../core/overview.ts";
import type { ReviewItem } from "../core/review.ts";
import type { Task } from "../core/task.ts";
import { WHY_PASSED_OVER } from "../store/newer-claims.ts";
import type { NewerRef } from "../store/store.ts";
import { taskRef } from "../store/task-store.ts";
import { overviewText, taskLine } from "./render.ts";
import { statusText } from "./render-status.ts";

/** The tasks with `newer_on_remote: true` on those held back as newer. */
export function markNewer<T extends { id: string }>(tasks: T[], held: Map<string, NewerRef>): (T & { newer_on_remote?: true })[] {
  return markNewerBy(tasks, (t) => t.id, held);
}

function markNewerBy<T extends object>(items: T[], idOf: (t: T) => string | string[], held: Map<string, NewerRef>): (T & { newer_on_remote?: true })[] {
  const named = (t: T) => ([] as string[]).concat(idOf(t)).some((id) => held.has(taskRef(id)));
  return held.size ? items.map((t) => (named(t) ? { ...t, newer_on_remote: true as const } : t)) : items;
}

/** A claim in the overview, marked as markNewer marks a task. */
export type ShownHeldTask = HeldTask & { newer_on_remote?: true };

/** The overview (MCP overview, load_context, status) with each claim on a task held back as newer marked. */
export function markOverview<O extends Overview>(o: O, held: Map<string, NewerRef>): O & { holders: { agent: string; tasks: ShownHeldTask[] }[]; expiring_soon: ShownHeldTask[]; expired: ShownHeldTask[] } {
  if (!held.size) return o;
  const mark = (ts: HeldTask[]) => markNewerBy(ts, (t) => t.task, held);
  return { ...o, holders: o.holders.map((h) => ({ ...h, tasks: mark(h.tasks) })), expiring_soon: mark(o.expiring_soon), expired: mark(o.expired) };
}

/** The overview's text, each claim on a task held back as newer noted as `task list` notes it. */
export function notedOverviewText(o: Overview, held: Map<string, NewerRef>, now: Date): string {
  return overviewText(o, now, undefined, held.size ? (id) => newerTaskNote(id, held) : undefined);
}

/**
 * `status --json`: each task held back as newer marked wherever the view names it (its claim, its
 * matrix row, its review entry, a blocked edge). An edge names two tasks and is marked for either:
 * a waiter held back may no longer wait, a blocker held back may be done (or, missing here, exist).
 */
export function markStatus<V extends StatusView>(v: V, held: Map<string, NewerRef>): V & { matrix: { rows: (MatrixRow & { newer_on_remote?: true })[] }; blocked: (BlockedEdge & { newer_on_remote?: true })[]; review: (ReviewItem & { newer_on_remote?: true })[] } {
  if (!held.size) return v;
  const marked = markOverview(v, held);
  return { ...marked, matrix: { ...v.matrix, rows: markNewerBy(v.matrix.rows, (r) => r.task, held) }, blocked: markNewerBy(v.blocked, (e) => [e.task, e.waits_on], held), review: markNewerBy(v.review, (r) => r.task, held) };
}

/** `status`'s text, each line of a task held back as newer noted as `task list` notes it. */
export function notedStatusText(v: StatusView, header: string, now: Date, held: Map<string, NewerRef>, opts: { all?: boolean } = {}): string {
  return statusText(v, header, now, held.size ? { ...opts, note: (id) => newerTaskNote(id, held) } : opts);
}

/** The text after a task's line or detail when it is held back as newer, else "". */
export function newerTaskNote(id: string, held: Map<string, NewerRef>): string {
  const q = held.get(taskRef(id));
  return q ? `  (on ${q.remote} from a newer git-handoff: this copy may be stale; upgrade to change it)` : "";
}

/** One task as `task show` and MCP's get_task show it: the record marked, and the line after its detail ("" when not held back). */
export function shownWithNote<T extends { id: string }>(task: T, held: Map<string, NewerRef>): { shown: T & { newer_on_remote?: true }; note: string } {
  return { shown: markNewer([task], held)[0]!, note: newerTaskNote(task.id, held).trim() };
}

/** One line per task, each held back as newer noted: what `task list` and MCP's list tools print. */
export function notedTaskLines(tasks: Task[], held: Map<string, NewerRef>, now: Date): string[] {
  return tasks.map((t) => taskLine(t, now) + newerTaskNote(t.id, held));
}

/** Beside `ready` (stderr, MCP notices): ready tasks left out, as claiming them would write a ref held back as newer (store/newer-claims.ts). */
export function skippedNewerNote(ids: string[]): string {
  return `${ids.length} ready task(s) not listed (${ids.join(", ")}): ${WHY_PASSED_OVER}; upgrade to take them`;
}

/** After a `claim --next` that passed such tasks over for the one it took. */
export function passedOverNote(count: number): string {
  return `(passed over ${count} ready task(s): ${WHY_PASSED_OVER}; upgrade to take them)`;
}
