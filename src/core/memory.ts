// Shared memories: short notes an agent leaves for the others (a decision, a gotcha, where things
// are), optionally tied to a task and tagged. One record per memory, on its own ref, so two agents
// writing memories never contend and an edit is one compare-and-swap on that memory alone.
import * as z from "zod/mini";
import { fail } from "./errors.ts";
import type { HandoffEvent } from "./event.ts";
import type { Actor } from "./identity.ts";
import { refComponentProblem } from "./ids.ts";
import { isoTime, lazySchema } from "./schema-helpers.ts";
import { textOrder } from "./text-order.ts";

export const MEMORY_FORMAT = 1;
export const MAX_MEMORY_TEXT = 4000;
export const MAX_TAGS = 10;
const TAG_RE = /^[a-z0-9][a-z0-9._-]{0,39}$/;

export const Memory = lazySchema(() =>
  z.object({
    format: z.literal(MEMORY_FORMAT),
    id: z.string(),
    text: z.string().check(z.minLength(1), z.maxLength(MAX_MEMORY_TEXT)),
    tags: z.array(z.string().check(z.regex(TAG_RE))).check(z.maxLength(MAX_TAGS)),
    task: z.nullable(z.string()),
    author: z.string(),
    created_at: isoTime(),
    updated_at: isoTime(),
    updated_by: z.string(),
    /** A tombstone: removed memories keep their ref so the removal syncs like any edit. */
    removed: z.optional(z.boolean()),
  }),
);
export type Memory = z.infer<typeof Memory>;

/**
 * Why a memory's text cannot be stored, or null. Newlines and tabs are text; every other control
 * character (terminal escapes, NUL) is refused, since memories are shown to other agents and people.
 */
export function memoryTextProblem(text: string): string | null {
  if (!text.trim()) return "is empty";
  if (text.length > MAX_MEMORY_TEXT) return `is ${text.length} characters; at most ${MAX_MEMORY_TEXT}`;
  // The characters the display escapes (present/untrusted.ts), and the line and paragraph separators.
  const bad = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.exec(text);
  if (bad) return `holds the control character U+${bad[0].charCodeAt(0).toString(16).padStart(4, "0").toUpperCase()}`;
  return null;
}

export function validateTags(tags: string[]): string[] {
  const out = [...new Set(tags.map((t) => t.trim().toLowerCase()))].sort();
  if (out.length > MAX_TAGS) fail("invalid_input", `a memory takes at most ${MAX_TAGS} tags; got ${out.length}`);
  // Named as given (tags are matched in lower case; the given spelling is what the caller can find).
  const bad = tags.find((t) => !TAG_RE.test(t.trim().toLowerCase()));
  if (bad !== undefined) fail("invalid_input", `invalid tag ${JSON.stringify(bad.slice(0, 60))}: letters (matched in lower case), digits and . _ -, at most 40, starting with a letter or digit`);
  return out;
}

export function validateMemoryId(id: string): string {
  const problem = refComponentProblem(id);
  if (problem || !/^m-/.test(id)) fail("invalid_input", `invalid memory id ${JSON.stringify(id.slice(0, 80))}: ${problem ? `it ${problem}` : "memory ids start with m-"}`);
  return id;
}

/** Newest first; what `memory list` and the context budget walk. */
export function byRecency(a: Memory, b: Memory): number {
  return textOrder(b.updated_at, a.updated_at) || textOrder(a.id, b.id);
}

/**
 * The memories an agent starts with, within a character budget: those of its own tasks first,
 * then the newest of the project's. Whole memories only; what does not fit is counted.
 */
export function memoriesForContext(all: Memory[], myTasks: Set<string>, budget: number): { shown: Memory[]; omitted: number } {
  const mine = all.filter((m) => m.task !== null && myTasks.has(m.task)).sort(byRecency);
  const rest = all.filter((m) => !(m.task !== null && myTasks.has(m.task))).sort(byRecency);
  const shown: Memory[] = [];
  let used = 0;
  for (const m of [...mine, ...rest]) {
    if (used + m.text.length > budget) continue;
    shown.push(m);
    used += m.text.length;
  }
  return { shown, omitted: all.length - shown.length };
}


export type MemoryEventType = "memory_added" | "memory_edited" | "memory_removed";

/** The event that heads a memory's commit (the memory's first line as its note). */
export function memoryEvent(type: MemoryEventType, m: Memory, actor: Actor, now: Date): HandoffEvent {
  const { agent, scope, worktree, branch } = actor;
  return { type, task: m.task ?? "", agent, at: now.toISOString(), scope, worktree, branch, memory: m.id, note: m.text.split("\n")[0]!.slice(0, 200) };
}
