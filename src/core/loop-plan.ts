// The session loop's plan: ready work grouped into units, one worktree and one agent each. Pure.
// Tasks whose scopes overlap, or that wait on each other, go into one unit (in dependency order),
// so no two units ever share a scope and no unit waits on another; units past --max-worktrees
// wait for a slot, which `after` names.
import { dependenciesOf } from "./dependency-graph.ts";
import { groupDigits } from "./digits.ts";
import { overlapWitness } from "./glob-overlap.ts";
import { GRANT_MATCH_BUDGET, newMatchBudget, SPENT, withinBudget } from "./match-budget.ts";
import { namedFew } from "./named-few.ts";
import { settle } from "./task-ops.ts";
import type { Task } from "./task.ts";
import { textOrder } from "./text-order.ts";

export interface PlannedUnit {
  id: string;
  /** Task ids in the order the unit's agent does them (every dependency before its dependents). */
  tasks: string[];
  /** The union of its tasks' scopes. */
  scope: string[];
  /** Units that must finish before this one starts (the worktree slot it reuses). */
  after: string[];
}

/** A todo task left out of the plan, and why. */
export interface WaitingTask {
  task: string;
  reason: string;
}

export interface LoopPlan {
  units: PlannedUnit[];
  waiting: WaitingTask[];
  /** Tasks with a pair of scopes not compared within the budget: planned as overlapping, and why. */
  not_compared?: { tasks: string[]; note: string };
}

const nobody = { agent: "", worktree: null, branch: null, scope: "primary" as const };

/** Best first: priority, then age, then id (the order `ready` uses). */
function better(a: Task, b: Task): number {
  return b.priority - a.priority || textOrder(a.created_at, b.created_at) || textOrder(a.id, b.id);
}

/**
 * The plan for `tasks` at `now`: every unclaimed todo task whose dependencies are done or in the
 * plan themselves. A task waiting on one that is claimed, in review, failed or missing is left out.
 */
export function planLoop(all: Task[], now: Date, opts: { maxWorktrees: number }): LoopPlan {
  const tasks = all.map((t) => settle(t, { actor: nobody, now }).record);
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const waiting: WaitingTask[] = [];
  // Plannable: todo, not addressed elsewhere, and every dependency done or plannable (a fixpoint).
  const plannable = new Set(tasks.filter((t) => t.status === "todo" && !t.to).map((t) => t.id));
  const why = new Map<string, string>();
  for (const t of tasks) if (t.status === "todo" && t.to) why.set(t.id, "it is addressed to a kind of agent or machine (take it with worker or claim)");
  for (let changed = true; changed; ) {
    changed = false;
    for (const id of [...plannable]) {
      for (const dep of dependenciesOf(byId.get(id)!)) {
        const d = byId.get(dep);
        if (d?.status === "done" || plannable.has(dep)) continue;
        plannable.delete(id);
        why.set(id, d ? `it waits on ${dep}, which is ${d.status === "todo" ? "not plannable" : d.status}` : `it waits on ${dep}, which does not exist`);
        changed = true;
        break;
      }
    }
  }
  for (const [task, reason] of why) waiting.push({ task, reason });
  waiting.sort((a, b) => textOrder(a.task, b.task));

  const members = tasks.filter((t) => plannable.has(t.id)).sort(better);
  // Union-find over overlapping scopes and dependency edges.
  const parent = new Map(members.map((t) => [t.id, t.id]));
  const find = (x: string): string => {
    let r = x;
    while (parent.get(r) !== r) r = parent.get(r)!;
    for (let c = x; c !== r; ) {
      const n = parent.get(c)!;
      parent.set(c, r);
      c = n;
    }
    return r;
  };
  const union = (a: string, b: string) => {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent.set(rb, ra);
  };
  for (const t of members) for (const dep of dependenciesOf(t)) if (plannable.has(dep)) union(t.id, dep);
  // Scopes come from every clone: compared within a budget (match-budget.ts), a pair past it is
  // taken as overlapping, so its tasks share a unit and never run side by side unchecked.
  const work = newMatchBudget(GRANT_MATCH_BUDGET);
  const unchecked = new Set<string>();
  for (let i = 0; i < members.length; i++) {
    for (let j = i + 1; j < members.length; j++) {
      const a = members[i]!;
      const b = members[j]!;
      if (find(a.id) === find(b.id)) continue;
      const met = withinBudget(() => a.scope.some((x) => b.scope.some((y) => overlapWitness(x, y, work) !== null)));
      if (met === SPENT) unchecked.add(a.id).add(b.id);
      if (met) union(a.id, b.id);
    }
  }
  const groups = new Map<string, Task[]>();
  for (const t of members) {
    const root = find(t.id);
    if (!groups.has(root)) groups.set(root, []);
    groups.get(root)!.push(t);
  }
  // Groups in the order of their best task (members is sorted, so first seen is best).
  const units: PlannedUnit[] = [...groups.values()].map((g, i) => ({
    id: `u${i + 1}`,
    tasks: dependencyOrder(g, plannable),
    scope: [...new Set(g.flatMap((t) => t.scope))],
    after: [],
  }));
  const slots = Math.max(1, opts.maxWorktrees);
  for (let i = slots; i < units.length; i++) units[i]!.after = [units[i - slots]!.id];
  return { units, waiting, ...(unchecked.size ? { not_compared: notCompared([...unchecked]) } : {}) };
}

/** What a plan says of the tasks whose scopes it could not compare within its budget. */
function notCompared(tasks: string[]): NonNullable<LoopPlan["not_compared"]> {
  return { tasks, note: `the scopes of ${namedFew(tasks, 5)} took more than the budget of matching a plan may do (${groupDigits(GRANT_MATCH_BUDGET)} units) to compare, so they are planned as overlapping: in one unit, never side by side` };
}

/** A topological order of one group, the best ready task first at each step. */
function dependencyOrder(group: Task[], plannable: Set<string>): string[] {
  const inGroup = new Set(group.map((t) => t.id));
  const left = [...group].sort(better);
  const placed = new Set<string>();
  const order: string[] = [];
  while (left.length) {
    const i = left.findIndex((t) => dependenciesOf(t).every((d) => !inGroup.has(d) || !plannable.has(d) || placed.has(d)));
    // Dependencies are acyclic (task add refuses cycles); should a record hold one, keep going.
    const [next] = left.splice(i < 0 ? 0 : i, 1);
    placed.add(next!.id);
    order.push(next!.id);
  }
  return order;
}
