// Dependencies under compare-and-swap: depend / undepend (cycle-checked against the whole graph),
// claims that respect them, and readiness.
import { addDependency, blockedRefusal, blockingEdges, cycleRefusal, dependenciesOf, findCycle, MAX_DEPENDENCIES, reachable, readyTasks, removeDependency, unblockedBy, type BlockedEdge } from "../core/dependency-graph.ts";
import { fail, HandoffError, type Refusal } from "../core/errors.ts";
import { validateTaskId } from "../core/ids.ts";
import type { Outcome } from "../core/outcome.ts";
import { claimTask, holdsLive, type NewTaskInput, type OpContext } from "../core/task-ops.ts";
import { Task } from "../core/task.ts";
import { worktreeHead } from "./worktree-head.ts";
import type { RefUpdate } from "../git/refs.ts";
import { writeSteps } from "./codec.ts";
import { addressRefusal, type Taker } from "../core/address.ts";
import { takerOf } from "./machine.ts";
import { readyFrom } from "./task-listing.ts";
import { viewContext } from "./check-context.ts";
import { fromOrderFile, orderedTasks } from "./task-order.ts";
import { claimWritesNewer } from "./newer-claims.ts";
import { ReadMoved } from "./rests-on.ts";
import type { CasOptions, NewerRef, Store } from "./store.ts";
import { addTask, claimNext, listTasks, loadTask, mutateTask, TASKS_PREFIX, taskRef } from "./task-store.ts";

const TASK_FILE = "task.json";

/** Every readable task with the tip it was read from. */
export async function taskGraph(store: Store): Promise<Map<string, { task: Task; tip: string }>> {
  const graph = new Map<string, { task: Task; tip: string }>();
  for (const { name, oid } of await store.listRefs(TASKS_PREFIX)) {
    try {
      const record = await store.record(name, oid, TASK_FILE, Task);
      graph.set(record.id, { task: record, tip: oid });
    } catch (e) {
      if (!(e instanceof HandoffError)) throw e;
    }
  }
  return graph;
}

async function requireTask(store: Store, id: string, role: string): Promise<void> {
  if (!(await store.readRef(taskRef(id)))) {
    fail("not_found", `no task ${id} (${role})`, { task: id }, [{ action: "fix_input", detail: "list tasks: git handoff task list" }]);
  }
}

/** `task add --after ...`: each dependency must exist; a new task cannot close a cycle. */
export async function addTaskAfter(store: Store, input: Omit<NewTaskInput, "id"> & { id?: string }): Promise<Task> {
  const after = [...new Set(input.after ?? [])];
  for (const dep of after) validateTaskId(dep);
  if (input.id !== undefined && after.includes(input.id)) fail("invalid_input", `task ${input.id} cannot depend on itself`);
  if (after.length > MAX_DEPENDENCIES) fail("invalid_input", `${after.length} dependencies; at most ${MAX_DEPENDENCIES}`);
  for (const dep of after) await requireTask(store, dep, "given with --after");
  return addTask(store, { ...input, after });
}

/**
 * `id` waits on `on`. The cycle check reads the whole graph; every task on a path from `on` is
 * verified unchanged in the same transaction, so two concurrent `depend`s cannot close a cycle.
 */
export async function depend(store: Store, id: string, on: string): Promise<Task> {
  validateTaskId(id);
  validateTaskId(on);
  if (id === on) fail("invalid_input", `task ${id} cannot depend on itself`);
  return store.casLoop(async (now) => {
    const { task, tip } = await loadTask(store, id);
    await requireTask(store, on, "given with --on");
    const out = addDependency(task, on, { actor: store.actor, now });
    if (!out.ok) throw new HandoffError(out.refusal);
    if (!out.steps.length) return { updates: [], result: out.record };
    const graph = await taskGraph(store);
    const byId = new Map([...graph].map(([k, v]) => [k, v.task]));
    byId.set(id, task);
    const cycle = findCycle(byId, id, on);
    if (cycle) throw new HandoffError(cycleRefusal(cycle));
    const updates: RefUpdate[] = [{ ref: taskRef(id), new: writeSteps(store, tip, TASK_FILE, out.steps), old: tip }];
    for (const dep of reachable(byId, on)) {
      const entry = graph.get(dep);
      if (entry && dep !== id) updates.push({ ref: taskRef(dep), new: entry.tip, old: entry.tip });
    }
    return { updates, result: out.record };
  });
}

export async function undepend(store: Store, id: string, on: string): Promise<Task> {
  validateTaskId(on);
  return store.casLoop(async (now) => {
    const { task, tip } = await loadTask(store, id);
    const out = removeDependency(task, on, { actor: store.actor, now });
    if (!out.ok) throw new HandoffError(out.refusal);
    return { updates: [{ ref: taskRef(id), new: writeSteps(store, tip, TASK_FILE, out.steps), old: tip }], result: out.record };
  });
}

/** The blocked edges of one task, read from its dependencies as they stand now. */
export async function blockedEdgesOf(store: Store, task: Task): Promise<BlockedEdge[]> {
  const byId = new Map<string, Task>();
  for (const dep of task.after ?? []) {
    try {
      byId.set(dep, (await loadTask(store, dep)).task);
    } catch (e) {
      if (!(e instanceof HandoffError)) throw e; // missing: reported as a `missing` edge
    }
  }
  return blockingEdges(task, byId, await viewContext(store));
}

/**
 * A new grant records the claimer's HEAD as the task's base, so a handoff or review can say what
 * changed since the work began.
 */
function recordingBase(op: (t: Task, ctx: OpContext) => Outcome<Task>, base: string | null): (t: Task, ctx: OpContext) => Outcome<Task> {
  return (t, ctx) => {
    const out = op(t, ctx);
    if (!out.ok || !base || out.record.status !== "claimed" || out.record.claim?.fence === t.claim?.fence) return out;
    const record = { ...out.record, base };
    const steps = out.steps.map((s, i) => (i === out.steps.length - 1 ? { ...s, record } : s));
    return { ok: true, record, steps };
  };
}

async function headOf(store: Store): Promise<string | null> {
  return store.repo.workTree ? worktreeHead(store) : null;
}

/** Claims one task; refused (exit 3) while a dependency is not done, unless `force`. */
type Mutate = (store: Store, id: string, op: (task: Task, ctx: OpContext) => Outcome<Task>, opts: CasOptions) => Promise<Task>;

/** A claim of a task addressed to someone else is refused, even with --force (addressing routes work). */
function addressed(op: (t: Task, ctx: OpContext) => Outcome<Task>, who: Taker): (t: Task, ctx: OpContext) => Outcome<Task> {
  return (t, ctx) => {
    const why = holdsLive(t, ctx.actor.agent, ctx.now) ? null : addressRefusal(t, who);
    return why ? { ok: false, refusal: why } : op(t, ctx);
  };
}

export async function claimChecked(store: Store, id: string, ttlMs: number, opts: { force?: boolean; mutate?: Mutate } = {}): Promise<Task> {
  const base = await headOf(store);
  // Who we are as a taker of addressed tasks costs a `git config` process (the machine name):
  // asked only for a task addressed to someone. A task found addressed only inside the
  // compare-and-swap (addressed meanwhile) is read again once it is known.
  let who: Taker | null = opts.force ? await takerOf(store) : null;
  const granted = recordingBase((t, ctx) => claimTask(t, ctx, ttlMs), base);
  const claim = (t: Task, ctx: OpContext): Outcome<Task> => {
    if (who) return addressed(granted, who)(t, ctx);
    if (t.to && !holdsLive(t, ctx.actor.agent, ctx.now)) throw new MachineNeeded();
    return granted(t, ctx);
  };
  const mutate = opts.mutate ?? mutateTask;
  if (opts.force) return mutate(store, id, claim, { exclusive: true });
  for (let round = 0; ; round++) {
    // Dependencies are read first, then checked inside the compare-and-swap on the task as it then
    // stands. A done dependency stays done, so a passing check cannot be undone by a race; a
    // dependency added meanwhile is one we did not read: read again.
    // Not here yet may mean only on the sync remote: the compare-and-swap fetches it, then we read again.
    const task = await loadTask(store, id).then((r) => r.task, (e) => {
      if (e instanceof HandoffError && e.code === "not_found") return null;
      throw e;
    });
    if (task?.to && !who) who = await takerOf(store);
    const read = new Set(task?.after ?? []);
    const deps = new Map<string, Task>();
    // The claim counts only while each dependency still holds the record read (rests-on.ts): through
    // a sync remote, a `done` made here but not pushed yet goes out with the claim, or, if the remote
    // moved the dependency meanwhile (another agent holds it), the claim does not count.
    const tips = new Map<string, string>();
    for (const dep of read) {
      const tip = await store.readRef(taskRef(dep));
      if (tip) deps.set(dep, await store.record(taskRef(dep), tip, TASK_FILE, Task));
      if (tip) tips.set(taskRef(dep), tip);
    }
    try {
      return await mutate(store, id, (t, ctx) => {
        // Only a renewal skips the check: the caller's own expired claim makes this a new grant.
        if (!(t.after ?? []).length || holdsLive(t, ctx.actor.agent, ctx.now)) return claim(t, ctx);
        if ((t.after ?? []).some((d) => !read.has(d))) throw new DependenciesMoved();
        const edges = blockingEdges(t, deps, ctx);
        return edges.length ? { ok: false, refusal: blockedRefusal(t, edges) } : claim(t, ctx);
      }, { exclusive: true, restsOn: tips });
    } catch (e) {
      if (e instanceof MachineNeeded && !who) {
        who = await takerOf(store);
        continue;
      }
      if (e instanceof DependenciesMoved || e instanceof ReadMoved) {
        if (round < 5) continue;
        // Not a fault: other writers kept moving what the decision rests on. Said with a stable code.
        fail("lost_race", `task ${id}'s dependencies kept changing while it was being claimed (${round + 1} tries); try again`, { task: id }, [
          { action: "retry", detail: `git handoff claim ${id}` },
        ]);
      }
      throw e;
    }
  }
}

class DependenciesMoved extends Error {}
class MachineNeeded extends Error {}

/**
 * `claim --next` and `ready --claim`: the best task whose dependencies are all done. `skip`: tasks
 * this caller will not take again (a worker that could not set one up).
 */
export async function claimReady(store: Store, ttlMs: number, mutate: Mutate = mutateTask, skip?: { has(id: string): boolean }, newer: Set<string> = new Set(), passOver?: (candidate: Task) => Refusal | null): Promise<Task> {
  const base = await headOf(store);
  const who = await takerOf(store);
  // Tasks whose claim would write a ref the remote holds in a newer format (newer-claims.ts): the
  // write could never be sent, so they are passed over for the next candidate, and `newer` collects
  // them for the caller to count.
  const held = await store.heldAsNewer();
  return claimNext(store, recordingBase((t, ctx) => claimTask(t, ctx, ttlMs), base), mutate, {
    // The claim moves a task ref next: the loose refs' record read, none written (task-ref-record.ts).
    ordered: () => orderedTasks(store, { keep: false }),
    ready: (byId) => {
      const now = store.now();
      return (candidate) => {
        if (skip?.has(candidate.id)) return { code: "wrong_state", message: `task ${candidate.id} is one this caller could not set up` };
        if (claimWritesNewer(candidate, held)) {
          newer.add(candidate.id);
          return { code: "wrong_state", message: `claiming task ${candidate.id} would write a ref the remote holds from a newer git-handoff` };
        }
        const elsewhere = addressRefusal(candidate, who);
        if (elsewhere) return elsewhere;
        const edges = dependenciesOf(candidate).length ? blockingEdges(candidate, byId, now) : [];
        if (edges.length) return blockedRefusal(candidate, edges);
        // Last: the caller hears only of tasks it could otherwise have taken.
        return passOver?.(candidate) ?? null;
      };
    },
  });
}

/**
 * The tasks this agent could claim now, best first, at most `limit` of them, and how many there
 * are. A one-shot command reads the task order file (task-order.ts): the records of the ready
 * tasks it returns, and of the others only those the file's head cannot decide.
 */
export async function listReady(store: Store, opts: { limit?: number } = {}): Promise<{ ready: Task[]; total: number; problems: string[]; newer: string[] }> {
  const who = await takerOf(store);
  // Settled as a claim would be (another agent's claim inside the takeover grace is not ready).
  const ctx = await viewContext(store);
  const limit = opts.limit ?? Infinity;
  // Tasks whose claim would write a ref the remote holds in a newer format cannot be claimed here
  // (claim --next passes them over): left out, by id in `newer`. While any ref is held back, the
  // order file's head is not the answer.
  const held = await store.heldAsNewer();
  const fromFile = held.size ? null : await fromOrderFile(store, (o) => readyFrom(o, who, ctx, limit));
  if (fromFile) return { ...fromFile, problems: [], newer: [] };
  const { tasks, problems } = await listTasks(store, { settled: false });
  const { ready, newer } = readyAmong(tasks, who, ctx, held);
  return { ready: ready.slice(0, limit), total: ready.length, problems, newer };
}

/**
 * Of `tasks`, those `who` could claim now, best first: dependencies done, not addressed to another
 * kind of agent or machine, and not passed over for a ref held back as newer (by id in `newer`).
 * For a caller that has listed the tasks already (MCP's load_context).
 */
export function readyAmong(tasks: readonly Task[], who: Taker, at: Date | OpContext, held: Map<string, NewerRef>): { ready: Task[]; newer: string[] } {
  const all = readyTasks(tasks as Task[], at).filter((t) => !addressRefusal(t, who));
  return { ready: all.filter((t) => !claimWritesNewer(t, held)), newer: all.filter((t) => claimWritesNewer(t, held)).map((t) => t.id) };
}

/** After `id` is done: the tasks it unblocked, for the text output of done / review accept. */
export async function unblockedText(store: Store, id: string): Promise<string> {
  const { tasks } = await listTasks(store, { settled: false });
  const freed = unblockedBy(id, tasks, store.now());
  if (!freed.length) return "";
  const handoffs = (tasks.find((t) => t.id === id)?.handoffs ?? []).filter((h) => h.to === null).map((h) => h.id);
  const delivery = handoffs.length ? `; ${handoffs.join(" ")} goes to whoever claims ${freed.length === 1 ? "it" : "them"}` : "";
  return `\nunblocked: ${freed.map((t) => t.id).join(" ")}${delivery}`;
}
