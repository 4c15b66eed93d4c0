// Re-applying an operation recorded on one clone to the state another clone pushed first. Each
// recorded event names the intent (claim, renew, done...); the intent goes back through the same
// pure operations, so whatever no longer applies comes back as the usual refusal.
import { addDependency, removeDependency } from "./dependency-graph.ts";
import type { HandoffEvent } from "./event.ts";
import type { Actor } from "./identity.ts";
import { refuse, type Outcome } from "./outcome.ts";
import type { Task } from "./task.ts";
import {
  cancelTask,
  claimTask,
  completeTask,
  failTask,
  reclaimTask,
  releaseTask,
  renewTask,
  type OpContext,
} from "./task-ops.ts";

/** Re-applies one recorded intent. `recorded` is the record the event produced where it was made. */
export type TaskReplayer = (task: Task, event: HandoffEvent, recorded: Task, ctx: OpContext) => Outcome<Task>;

const ttlOf = (recorded: Task, fallback: number) => recorded.claim?.ttl_ms ?? fallback;

/**
 * Replayers by event type. Other features add theirs (handoffs, dependencies) with
 * `registerTaskReplayer`; an event type with none becomes a conflict, never a silent loss.
 */
const replayers = new Map<string, TaskReplayer>([
  ["claimed", (t, _e, rec, ctx) => claimTask(t, ctx, ttlOf(rec, 30 * 60_000))],
  ["renewed", (t, _e, rec, ctx) => renewTask(t, ctx, rec.claim?.ttl_ms)],
  ["released", (t, _e, _r, ctx) => releaseTask(t, ctx)],
  [
    "done",
    (t, e, _r, ctx) =>
      completeTask(t, ctx, { ...(e.commit !== undefined ? { commit: e.commit } : {}), ...(e.note !== undefined ? { note: e.note } : {}), ...(e.results !== undefined ? { results: e.results } : {}) }),
  ],
  ["failed", (t, e, _r, ctx) => failTask(t, ctx, e.reason ?? "failed", e.results)],
  ["cancelled", (t, e, _r, ctx) => cancelTask(t, ctx, e.reason ?? "cancelled")],
  // The edge alone: whether it closes a cycle depends on the other tasks, which sync checks on the
  // whole graph before it pushes (sync/dependency-cycles.ts).
  ["depended", (t, e, _r, ctx) => addDependency(t, e.on ?? "", ctx)],
  ["undepended", (t, e, _r, ctx) => removeDependency(t, e.on ?? "", ctx)],
  [
    "reclaimed",
    (t, e, _r, ctx) => {
      // A reclaim took one particular holder's lease; against anyone else it no longer applies.
      if (t.claim && e.holder !== undefined && t.claim.agent !== e.holder) {
        return refuse({
          code: "held_by_other",
          message: `task ${t.id} is now held by ${t.claim.agent}, not ${e.holder}: the reclaim no longer applies`,
          data: { task: t.id, holder: t.claim.agent, expires_at: t.claim.expires_at, fence: t.claim.fence },
        });
      }
      return reclaimTask(t, ctx, e.reason ?? "reclaimed");
    },
  ],
]);

export function registerTaskReplayer(type: string, replayer: TaskReplayer): void {
  replayers.set(type, replayer);
}

/**
 * Events another operation derives by itself (lazy expiry) are never replayed on their own: the
 * expiry, and the failure it brings when it used up the last attempt. `freed` is the record the
 * previous event left. An explicit `fail` of a task whose claim had run out also follows its own
 * settle's `expired` at the same instant; attempts were left then, and it is replayed like any fail.
 */
export function isDerivedEvent(event: HandoffEvent, previous: HandoffEvent | null, freed: Task | null): boolean {
  if (event.type === "expired") return true;
  return event.type === "failed" && previous?.type === "expired" && previous.at === event.at && freed !== null && freed.attempts >= freed.max_attempts;
}

export function actorOf(event: HandoffEvent): Actor {
  return { agent: event.by ?? event.agent, worktree: event.worktree, branch: event.branch, scope: event.scope };
}

/**
 * The time a replayed intent is applied at: when it was made, but never before the state it now
 * lands on was written, so history stays in time order.
 */
export function replayTime(event: HandoffEvent, onto: Task): Date {
  return new Date(Math.max(Date.parse(event.at), Date.parse(onto.updated_at)));
}

/**
 * `asMade`: at the event's own time, as its writer applied it (checking a received commit: a clock a
 * little behind the previous writer's made it), not moved up to follow the state it lands on.
 * `takeoverGraceMs`: replaying this clone's own write at sync, the grace its writes honour (another
 * agent's claim expired by this clock still stands for it: clock-skew.ts), so a write made before
 * the claim arrived here takes over nothing a write made after it would be refused. A received
 * commit is judged without it, by its writer's own clock.
 */
export function replayTaskEvent(task: Task, event: HandoffEvent, recorded: Task, o: { asMade?: boolean; takeoverGraceMs?: number } = {}): Outcome<Task> {
  const replayer = replayers.get(event.type);
  const actor = actorOf(event);
  if (!replayer) {
    return refuse({ code: "conflict", message: `cannot replay a ${event.type} event on task ${task.id}`, data: { task: task.id, type: event.type } });
  }
  const grace = o.takeoverGraceMs ? { takeoverGraceMs: o.takeoverGraceMs } : {};
  return replayer(task, event, recorded, { actor, now: o.asMade ? new Date(event.at) : replayTime(event, task), ...grace });
}
