// Which fields of a task each kind of step may change. Every write of a task goes through one of
// the pure operations (task-ops.ts, review.ts, handoff.ts, dependency-graph.ts, agent-roster.ts
// releaseForGc), and each spreads the task it was given and sets only its own fields. There is no
// verb that edits a task after `created`: its objective, scope, priority, verify command, address
// and the rest are what its creator wrote, for every reader. A received step that changes a field
// its kind never changes was not made by any of them (a forged objective on a live task, a priority
// raised under a claim), so receive refuses it (src/sync/task-receive.ts) as it refuses an illegal
// transition: one table, read by the check, and by whoever adds an operation.
import { canonicalJson } from "./canonical-json.ts";
import type { EventType } from "./event.ts";
import { bindingReclaim } from "./task-ops.ts";
import type { Task } from "./task.ts";

type Field = keyof Task;

/** What every step changes: when it was written. */
const EVERY_STEP: readonly Field[] = ["updated_at"];

/**
 * Per step kind, the fields it may change besides `updated_at`. `created` is a task's first commit
 * only (checked as a whole record); a kind not listed never writes a task ref.
 */
export const TASK_STEP_FIELDS: Readonly<Partial<Record<EventType, readonly Field[]>>> = {
  // A new grant; the claimer's HEAD as the base of its work (dependency-actions.ts recordingBase).
  claimed: ["status", "claim", "fence", "base"],
  renewed: ["claim"],
  released: ["status", "claim"],
  // Lazy expiry (settle): the claim ends and counts as an attempt.
  expired: ["status", "claim", "attempts"],
  done: ["status", "claim", "result"],
  // Also the failure settle derives when the last attempt ran out.
  failed: ["status", "claim", "result"],
  cancelled: ["status", "claim", "result"],
  reclaimed: ["status", "claim", "reclaimed"],
  // A silent agent's claim released by gc.
  agent_gc: ["status", "claim"],
  depended: ["after"],
  undepended: ["after"],
  // A handoff by the holder renews its claim, as any update by the holder does.
  handoff: ["claim", "handoffs"],
  acked: ["handoffs"],
  // A verification that did not pass: recorded, the holder keeps (and renews) the claim.
  verified: ["claim", "review"],
  submitted: ["status", "claim", "review", "result"],
  accepted: ["status", "review"],
  rejected: ["status", "claim", "review", "result"],
};

/**
 * A field builds from before it drop from every task they write (task-format.ts), which a step of
 * any kind may therefore leave out once it decides nothing: a reclaim after the next grant. While it
 * still binds, the task is written in format 2, which those builds never write over.
 */
const DROPPED_BY_OLDER_BUILDS: Readonly<Partial<Record<Field, (prev: Task) => boolean>>> = {
  reclaimed: (prev) => bindingReclaim(prev) === null,
};

/**
 * Why a `type` step from `prev` to `next` is not one its kind makes, or null: a kind that never
 * writes a task, or the fields it changed that its kind never changes. Absent and null are one value
 * (an optional field a step leaves alone may be either, as written).
 */
export function taskStepFieldProblem(type: EventType, prev: Task, next: Task): string | null {
  const allowed = TASK_STEP_FIELDS[type];
  if (!allowed) return `a ${type} step is not one that writes a task`;
  const may = new Set<string>([...EVERY_STEP, ...allowed]);
  const keys = new Set<string>([...Object.keys(prev), ...Object.keys(next)]);
  const value = (t: Task, k: string) => (t as Record<string, unknown>)[k] ?? null;
  const dropped = (k: string) => value(next, k) === null && !!DROPPED_BY_OLDER_BUILDS[k as Field]?.(prev);
  const changed = [...keys].filter((k) => !may.has(k) && canonicalJson(value(prev, k)) !== canonicalJson(value(next, k)) && !dropped(k)).sort();
  return changed.length ? `changed ${changed.join(", ")}, which a ${type} step never changes` : null;
}
