// Dependencies added in this clone meet those other clones pushed only at sync. Within one clone a
// `depend` checks the whole graph in one transaction; across clones each edge was checked without
// the other, and two edges together may close a cycle (X waits on Y here, Y on X there) that blocks
// both tasks for good. So before sync pushes, the edges added here are laid one by one on the
// remote's graph, in the order they were made: one that would close a cycle is refused, a conflict
// for its agent like any refused replay, and its commit is not pushed. The push then leases every
// task an accepted edge can reach, so a clone that pushes a closing edge meanwhile makes this push
// lose its lease and decide again. A push other than sync's (an exclusive write, a write under
// --push, queued renewals) sends the local commits of the refs it writes too: one that would carry
// such an edge meets the remote's graph the same way first (carriesEdges; remote-cas.ts).
import { cycleRefusal, dependenciesOf, findCycle, reachable } from "../core/dependency-graph.ts";
import { HandoffError, type Refusal } from "../core/errors.ts";
import type { PushUpdate } from "../git/push-lease.ts";
import { eventFromMessage } from "../store/codec.ts";
import { commitsSince, readCommit } from "../store/history.ts";
import type { Store } from "../store/store.ts";
import { readTaskAt, TASKS_PREFIX } from "../store/task-store.ts";
import { taskGraph } from "../store/dependency-actions.ts";
import type { Task } from "../core/task.ts";
import { replayRef, type Integration } from "./integrate.ts";
import type { Conflict } from "./local-area.ts";
import type { Tips } from "./tracking.ts";

interface Edge {
  ref: string;
  id: string;
  on: string;
  commit: string;
  at: string;
}

/**
 * Whether pushing `local` in place of the remote's `expected` would carry a dependency the remote's
 * record lacks: an edge made here that has not met the remote's graph. Reads two records only for
 * a task ref with commits the remote lacks; the usual claim (nothing here ahead) reads none.
 */
export async function carriesEdges(store: Store, refs: readonly { ref: string; local: string | null; expected: string | null }[]): Promise<boolean> {
  for (const r of refs) {
    // A task the remote does not have yet cannot be waited on there (as for refuseCycles).
    if (!r.ref.startsWith(TASKS_PREFIX) || r.local === null || r.expected === null || r.local === r.expected) continue;
    try {
      const [here, there] = await Promise.all([readTaskAt(store, r.ref, r.local), readTaskAt(store, r.ref, r.expected)]);
      const theirs = new Set(dependenciesOf(there));
      if (dependenciesOf(here).some((d) => !theirs.has(d))) return true;
    } catch (e) {
      // A record this build cannot read (kept back on receive, say): what it carries is sync's to judge.
      if (e instanceof HandoffError) return true;
      throw e;
    }
  }
  return false;
}

/**
 * `ahead`: the refs sync is about to push; `tracking`: the remote's refs as fetched. Returns what
 * to push instead (a ref whose refused edge was dropped), the conflicts, and the leases of the
 * tasks the accepted edges reach (`new` is `expected`: they only check; a caller leaves out those
 * it pushes itself).
 */
export async function refuseCycles(
  store: Store,
  ahead: Integration["ahead"],
  tracking: Tips,
): Promise<{ ahead: Integration["ahead"]; conflicts: Conflict[]; checks: PushUpdate[] }> {
  const edges: Edge[] = [];
  for (const a of ahead) {
    // A task the remote does not have yet cannot be waited on there: its edges close no cycle.
    if (!a.ref.startsWith(TASKS_PREFIX) || a.expected === null) continue;
    const [here, there] = await Promise.all([readTaskAt(store, a.ref, a.local), readTaskAt(store, a.ref, a.expected)]);
    const theirs = new Set(dependenciesOf(there));
    const added = dependenciesOf(here).filter((d) => !theirs.has(d));
    if (!added.length) continue;
    for (const oid of (await commitsSince(store, a.expected, a.local, a.ref)).commits) {
      const event = eventFromMessage((await readCommit(store, oid, a.ref)).message);
      if (event?.type === "depended" && event.on && added.includes(event.on)) edges.push({ ref: a.ref, id: here.id, on: event.on, commit: oid, at: event.at });
    }
  }
  if (!edges.length) return { ahead, conflicts: [], checks: [] };

  // The remote's graph, then the edges made here on it in the order they were made.
  const graph = new Map<string, Task>([...(await taskGraph(store))].map(([id, v]) => [id, v.task]));
  for (const e of edges) {
    const t = graph.get(e.id);
    if (t) graph.set(e.id, { ...t, after: dependenciesOf(t).filter((d) => !edges.some((x) => x.id === e.id && x.on === d)) });
  }
  edges.sort((x, y) => x.at.localeCompare(y.at) || x.id.localeCompare(y.id) || x.on.localeCompare(y.on));
  const refused = new Map<string, Map<string, Refusal>>();
  const reached = new Set<string>();
  for (const e of edges) {
    const cycle = findCycle(graph, e.id, e.on);
    if (cycle) {
      const why = cycleRefusal(cycle);
      const message = `${why.message} with a dependency another clone pushed first: ${e.id} does not wait on ${e.on}`;
      (refused.get(e.ref) ?? refused.set(e.ref, new Map()).get(e.ref)!).set(e.commit, { ...why, message, data: { ...why.data, task: e.id, on: e.on } });
      continue;
    }
    const t = graph.get(e.id)!;
    graph.set(e.id, { ...t, after: [...dependenciesOf(t), e.on] });
    for (const id of reachable(graph, e.on)) reached.add(id);
  }

  const conflicts: Conflict[] = [];
  const out: Integration["ahead"] = [];
  for (const a of ahead) {
    const skip = refused.get(a.ref);
    if (!skip) {
      out.push(a);
      continue;
    }
    const replay = await replayRef(store, a.ref, a.local, a.expected!, skip);
    const r = await store.updateRefs([{ ref: a.ref, old: a.local, new: replay.tip }]);
    // A local writer moved the ref meanwhile: push nothing of it now; the next sync decides again.
    if (!r.ok) continue;
    conflicts.push(...replay.conflicts);
    if (replay.tip !== a.expected) out.push({ ...a, local: replay.tip });
  }
  const checks: PushUpdate[] = [];
  for (const id of reached) {
    const ref = `${TASKS_PREFIX}${id}`;
    const tip = tracking.get(ref);
    if (tip) checks.push({ ref, new: tip, expected: tip });
  }
  return { ahead: out, conflicts, checks };
}
