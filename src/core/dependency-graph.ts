// Dependencies between tasks: `after` edges, readiness, blocked edges and cycle detection. Pure.
import type { Refusal } from "./errors.ts";
import type { HandoffEvent } from "./event.ts";
import { refuse, type Outcome } from "./outcome.ts";
import { isFinal, type Task, type TaskStatus } from "./task.ts";
import { settle, type OpContext, type Settleable } from "./task-ops.ts";
import { viewerContext } from "./clock-skew.ts";
import { handoffCommand } from "./shell-quote.ts";
import { textOrder } from "./text-order.ts";

export const MAX_DEPENDENCIES = 100;

export function dependenciesOf(t: Pick<Task, "after">): string[] {
  return t.after ?? [];
}

/** One edge that keeps a task from being ready: `task` waits on `waits_on`, which is not done. */
export interface BlockedEdge {
  task: string;
  waits_on: string;
  /** The blocker's state as a reader sees it (lazy expiry applied), or `missing`. */
  status: TaskStatus | "missing";
  holder: string | null;
  expires_at: string | null;
}

/** A bare time as nobody's context (clock-skew.ts viewerContext: no grace); a context as it is. */
function contextAt(at: Date | OpContext): OpContext {
  return at instanceof Date ? viewerContext(at) : at;
}

/**
 * `at`: the time, or the caller's context, whose takeover grace keeps another agent's claim of a
 * blocker held past its expiry (as readyTasks, and as a claim of the blocker is refused).
 */
export function blockingEdges(task: Pick<Task, "id" | "after">, byId: { get(id: string): Settleable | undefined }, at: Date | OpContext): BlockedEdge[] {
  const ctx = contextAt(at);
  const edges: BlockedEdge[] = [];
  for (const dep of dependenciesOf(task)) {
    const stored = byId.get(dep);
    if (!stored) {
      edges.push({ task: task.id, waits_on: dep, status: "missing", holder: null, expires_at: null });
      continue;
    }
    const t = settle(stored, ctx).record;
    if (t.status === "done") continue;
    edges.push({ task: task.id, waits_on: dep, status: t.status, holder: t.claim?.agent ?? null, expires_at: t.claim?.expires_at ?? null });
  }
  return edges;
}

export function edgeText(e: BlockedEdge): string {
  // "(claimed by alice until ...)": the status, then who holds it.
  const who = e.holder ? ` by ${e.holder} until ${e.expires_at}` : "";
  return `${e.task} waits on ${e.waits_on} (${e.status}${who})`;
}

export function blockedRefusal(task: Task, edges: BlockedEdge[]): Refusal {
  const holders = [...new Set(edges.map((e) => e.holder).filter((h): h is string => !!h))];
  return {
    code: "blocked",
    message: `task ${task.id} is blocked: ${edges.map(edgeText).join("; ")}`,
    data: { task: task.id, blocked_by: edges },
    suggestions: [
      { action: "wait", detail: `wait until ${edges.map((e) => e.waits_on).join(", ")} ${edges.length === 1 ? "is" : "are"} done; its handoffs come with your claim of ${task.id} (${handoffCommand("claim", task.id)}), readable before in ${handoffCommand("task", "show", edges[0]!.waits_on)}` },
      ...(holders.length ? [{ action: "negotiate" as const, detail: `ask ${holders.join(", ")} about the blocker, or claim it anyway: --force` }] : []),
      { action: "work_elsewhere", detail: "take a ready task: git handoff ready --claim" },
    ],
  };
}

/**
 * Unclaimed tasks whose dependencies are all done, best first (priority, then age, then id). `at`:
 * the time, or the caller's context, whose takeover grace keeps another agent's expired claim out
 * (a claim of it is refused until the grace ends).
 */
export function readyTasks(tasks: Task[], at: Date | OpContext): Task[] {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  return tasks
    .map((t) => readyRecord(t, (id) => byId.get(id)?.status, at))
    .filter((t): t is Task => t !== null)
    .sort(bestFirst);
}

/** Best first: the highest priority, then the oldest, then by id (the order claim --next takes). */
export function bestFirst(a: Task, b: Task): number {
  return b.priority - a.priority || textOrder(a.created_at, b.created_at) || textOrder(a.id, b.id);
}

/**
 * `task` as anyone reads it (an expired claim freed) when it is ready: todo, and every task it
 * waits on done (a stored status: settling never makes a task done); else null. `statusOf` gives
 * a task's stored status by id (undefined: no such task); `at` as for readyTasks.
 */
export function readyRecord(task: Task, statusOf: (id: string) => Task["status"] | undefined, at: Date | OpContext): Task | null {
  const t = settle(task, contextAt(at)).record;
  if (t.status !== "todo") return null;
  for (const dep of dependenciesOf(t)) if (statusOf(dep) !== "done") return null;
  return t;
}

/** Every task reachable from `start` along `after` edges, `start` included. */
export function reachable(byId: ReadonlyMap<string, Task>, start: string): Set<string> {
  const seen = new Set<string>();
  const stack = [start];
  while (stack.length) {
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const t = byId.get(id);
    if (t) stack.push(...dependenciesOf(t));
  }
  return seen;
}

/**
 * The cycle that `from` waiting on `to` would close, as the path `from -> to -> ... -> from`,
 * or null. A path back from `to` to `from` along `after` edges is exactly that cycle.
 */
export function findCycle(byId: ReadonlyMap<string, Task>, from: string, to: string): string[] | null {
  if (from === to) return [from, from];
  const parent = new Map<string, string>();
  const queue = [to];
  const seen = new Set([to]);
  while (queue.length) {
    const id = queue.shift()!;
    for (const next of dependenciesOf(byId.get(id) ?? ({} as Task))) {
      if (seen.has(next)) continue;
      parent.set(next, id);
      if (next === from) {
        const path = [from];
        for (let cur = from; cur !== to; ) path.push((cur = parent.get(cur)!));
        return [from, ...path.reverse()];
      }
      seen.add(next);
      queue.push(next);
    }
  }
  return null;
}

function depEvent(type: "depended" | "undepended", task: Task, on: string, ctx: OpContext): HandoffEvent {
  const { agent, scope, worktree, branch } = ctx.actor;
  return { type, task: task.id, on, agent, at: ctx.now.toISOString(), scope, worktree, branch };
}

/** `task` waits on `on` from now. The caller checks existence and cycles with the whole graph. */
export function addDependency(task: Task, on: string, ctx: OpContext): Outcome<Task> {
  if (on === task.id) return refuse({ code: "invalid_input", message: `task ${task.id} cannot depend on itself` });
  if (isFinal(task.status)) {
    return refuse({ code: "final_state", message: `task ${task.id} is ${task.status}: a dependency would change nothing`, data: { task: task.id, status: task.status } });
  }
  const deps = dependenciesOf(task);
  if (deps.includes(on)) return { ok: true, record: task, steps: [] };
  if (deps.length >= MAX_DEPENDENCIES) return refuse({ code: "invalid_input", message: `task ${task.id} already waits on ${MAX_DEPENDENCIES} tasks` });
  const record: Task = { ...task, after: [...deps, on], updated_at: ctx.now.toISOString() };
  return { ok: true, record, steps: [{ event: depEvent("depended", task, on, ctx), record }] };
}

export function removeDependency(task: Task, on: string, ctx: OpContext): Outcome<Task> {
  const deps = dependenciesOf(task);
  if (!deps.includes(on)) {
    return refuse({ code: "not_found", message: `task ${task.id} does not wait on ${on}`, data: { task: task.id, on, after: deps } });
  }
  const record: Task = { ...task, after: deps.filter((d) => d !== on), updated_at: ctx.now.toISOString() };
  return { ok: true, record, steps: [{ event: depEvent("undepended", task, on, ctx), record }] };
}

export function cycleRefusal(cycle: string[]): Refusal {
  return {
    code: "cycle",
    message: `refused: that dependency would close the cycle ${cycle.join(" -> ")}`,
    data: { cycle },
    suggestions: [{ action: "fix_input", detail: `remove an edge first: ${handoffCommand("undepend", cycle[1]!, "--on", cycle[2] ?? cycle[0]!)}` }],
  };
}

/** Tasks that became ready because `doneId` is done: they waited on it and wait on nothing else. */
export function unblockedBy(doneId: string, tasks: Task[], now: Date): Task[] {
  return readyTasks(tasks, now).filter((t) => dependenciesOf(t).includes(doneId));
}
