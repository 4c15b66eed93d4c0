// Input fields and renderings shared by the tool files.
import * as z from "zod/mini";
import type { Task } from "../../core/task.ts";
import { notedTaskLines, shownWithNote } from "../../present/newer-note.ts";
import { taskDetail } from "../../present/render.ts";
import type { NewerRef, Store } from "../../store/store.ts";
import type { ToolReply } from "../tool.ts";

export const describe = <T extends z.core.$ZodType>(schema: T, text: string): T =>
  (schema as unknown as { check(c: unknown): T }).check(z.describe(text));

export const taskId = () => describe(z.string(), "the task id, as returned by create_task or list_tasks (e.g. t-3kq8m2vd)");
export const ttl = () =>
  z.optional(describe(z.string(), "lease length such as 90s, 10m or 2h; default: claim_ttl in .handoff.yaml, else 30m"));
export const limit = (fallback: number) =>
  z.optional(describe(z.int().check(z.gte(1), z.lte(1000)), `return at most this many (default ${fallback})`));
export const waitSeconds = () =>
  z.optional(
    describe(z.number().check(z.gte(0)), "longest this call blocks, in seconds; capped by the server's bound (default: the bound, about 50 s)"),
  );

/** "3 todo, 1 claimed": how many of each value, in order of first appearance. */
export function tally(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${n} ${v}`).join(", ");
}

/** One task in a line: id, status, holder and lease end, the objective's start. */
export function taskSummary(t: Task): string {
  const held = t.claim ? ` by ${t.claim.agent} until ${t.claim.expires_at}` : "";
  const objective = t.objective.split("\n")[0]!;
  return `${t.id}: ${t.status}${held}: ${objective.length > 80 ? `${objective.slice(0, 77)}...` : objective}`;
}

/** One task as a tool reply: the record, and a headline plus the CLI's detailed rendering; with `held`, marked as `task show` marks it. */
export function taskReply(store: Store, task: Task, headline: string, held: Map<string, NewerRef> = new Map()): ToolReply {
  const { shown, note } = shownWithNote(task, held);
  return { data: { task: shown }, text: `${headline}\n${taskDetail(task, store.now())}${note ? `\n${note}` : ""}` };
}

/** One line per task, as the CLI's `task list` prints them: `held` (Store.heldAsNewer) notes those held back as newer. */
export function taskLines(store: Store, tasks: Task[], empty: string, held: Map<string, NewerRef> = new Map()): string {
  return tasks.length ? notedTaskLines(tasks, held, store.now()).join("\n") : empty;
}
