// What the page is sent is bounded by what it shows, whatever the number of tasks: at 10,000 tasks
// and 100 agents the whole state was ~8 MB of JSON per push (the task x agent matrix alone 4.3 MB),
// rebuilt and sent to every open page at each change. Each list keeps the part its view shows and
// its total, so the page can say how many it leaves out and which CLI call shows them. Pure.
import type { TaskStatus } from "../core/task.ts";

export const LIMITS = {
  /** Cards in each column of the board. */
  column: 200,
  /** Rows of the matrix, the blocked list and the stuck list. */
  rows: 300,
  /** The dependency graph: its first layers (the work nearest to ready), at most this many tasks. */
  graphLayers: 12,
  graphNodes: 200,
  leases: 500,
  review: 100,
} as const;

export interface GraphEdge {
  task: string;
  on: string;
  blocked: boolean;
  /** The state of `on` (the task waited on), or `missing`. */
  status: string;
  /** The state of `task` (the task that waits). */
  task_status: string;
}

export interface GraphPart {
  /** The edges among the tasks drawn. */
  edges: GraphEdge[];
  /** The whole graph's size: every task that waits or is waited on, every edge, the edges still blocking. */
  nodes_total: number;
  edges_total: number;
  blocking_total: number;
}

/**
 * The first `graphLayers` layers of the graph (a task's layer: the longest chain of tasks it waits
 * on), at most `graphNodes` tasks, nearest layers first, then by id. A task's layer depends only on
 * the tasks it waits on, which are in nearer layers, so the part drawn has the same layers as the
 * whole. Iterative: a chain of 10,000 tasks must not exhaust the stack.
 */
export function boundGraph(edges: GraphEdge[], limits: Pick<typeof LIMITS, "graphLayers" | "graphNodes"> = LIMITS): GraphPart {
  const after = new Map<string, string[]>();
  const nodes = new Set<string>();
  for (const e of edges) {
    nodes.add(e.task);
    nodes.add(e.on);
    const list = after.get(e.task);
    if (list) list.push(e.on);
    else after.set(e.task, [e.on]);
  }
  const depth = new Map<string, number>();
  const onPath = new Set<string>();
  for (const start of nodes) {
    if (depth.has(start)) continue;
    // Depth-first, children before parents; a task met again on its own path (a cycle, which only
    // damaged or hostile records can make) counts as layer 0 there, as the page did.
    const stack: { id: string; next: number }[] = [{ id: start, next: 0 }];
    onPath.add(start);
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      const deps = after.get(top.id) ?? [];
      if (top.next < deps.length) {
        const dep = deps[top.next++]!;
        if (!depth.has(dep) && !onPath.has(dep)) {
          onPath.add(dep);
          stack.push({ id: dep, next: 0 });
        }
        continue;
      }
      let d = 0;
      for (const dep of deps) d = Math.max(d, (depth.get(dep) ?? -1) + 1);
      depth.set(top.id, d);
      onPath.delete(top.id);
      stack.pop();
    }
  }
  const shown = new Set(
    [...nodes]
      .filter((n) => depth.get(n)! < limits.graphLayers)
      .sort((a, b) => depth.get(a)! - depth.get(b)! || (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, limits.graphNodes),
  );
  return {
    edges: edges.filter((e) => shown.has(e.task) && shown.has(e.on)),
    nodes_total: nodes.size,
    edges_total: edges.length,
    blocking_total: edges.filter((e) => e.blocked).length,
  };
}

/** The board's cards: the first `column` of each state by priority (highest first), then id; in the order given. */
export function boundCards<T extends { id: string; status: TaskStatus; priority: number }>(cards: T[], column: number = LIMITS.column): T[] {
  const byStatus = new Map<TaskStatus, T[]>();
  for (const c of cards) {
    const list = byStatus.get(c.status);
    if (list) list.push(c);
    else byStatus.set(c.status, [c]);
  }
  const kept = new Set<T>();
  for (const list of byStatus.values()) {
    if (list.length > column) list.sort((a, b) => b.priority - a.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const c of list.slice(0, column)) kept.add(c);
  }
  return cards.filter((c) => kept.has(c));
}

/** Matrix rows where someone holds or submitted something first, then the rest, up to `rows` (the page shows them in this order). */
export function boundRows<T extends { cells: unknown[] }>(rows: T[], limit: number = LIMITS.rows): T[] {
  const busy = rows.filter((r) => r.cells.some(Boolean));
  return [...busy, ...rows.filter((r) => !r.cells.some(Boolean))].slice(0, limit);
}

/** Leases to show: flagged ones (they carry the page's force-release action) first, in the order given. */
export function boundLeases<T extends { flag: unknown }>(leases: T[], limit: number = LIMITS.leases): T[] {
  if (leases.length <= limit) return leases;
  const flagged = new Set(leases.filter((l) => l.flag).slice(0, limit));
  const rest = leases.filter((l) => !flagged.has(l)).slice(0, limit - flagged.size);
  const kept = new Set([...flagged, ...rest]);
  return leases.filter((l) => kept.has(l));
}
