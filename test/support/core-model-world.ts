// The world of test/core-model.test.ts: stored task records and one lease set, the context the
// store passes to the core, and mutateTaskWithLeases as the store runs it (what a refusal still
// writes, which lease follow-ups share the transaction). Each helper names the store function it
// stands for; when the store changes how it calls the core, the helper changes with it.
import type { Refusal } from "../../src/core/errors.ts";
import type { Actor } from "../../src/core/identity.ts";
import type { LeaseSet } from "../../src/core/lease.ts";
import type { Outcome } from "../../src/core/outcome.ts";
import { followTask } from "../../src/core/task-leases.ts";
import { chainLeaseOps } from "../../src/core/lease-ops.ts";
import { isFinal, type Task } from "../../src/core/task.ts";
import { settle, type OpContext } from "../../src/core/task-ops.ts";

export interface World {
  /** Every task as stored (not settled), by id. */
  tasks: ReadonlyMap<string, Task>;
  leases: LeaseSet;
  /** The clock, in ms. */
  now: number;
}

/** What stays the same for one walk: the repository's policy and the clone's takeover grace. */
export interface Config {
  graceMs: number;
  /** max_concurrent; Infinity: claims made with --over-capacity (as `claim()` without the CLI). */
  capacity: number;
  exclusiveScope: boolean;
  allowSelf: boolean;
  /** A sync remote: claim --next draws among the best few (candidate-choice.ts). */
  spread: boolean;
}

export type Op =
  | { kind: "create"; agent: string; id: string; priority: number; scope: string[]; after: string[]; exclusive: boolean; maxAttempts: number }
  | { kind: "claim"; agent: string; id: string; ttlMs: number; force: boolean }
  | { kind: "claimNext"; agent: string; ttlMs: number; random: number }
  | { kind: "renew"; agent: string; id: string; ttlMs?: number }
  | { kind: "release" | "done" | "fail" | "cancel"; agent: string; id: string }
  | { kind: "reclaim"; agent: string; id: string; seen?: number }
  | { kind: "submit"; agent: string; id: string; passed: boolean }
  | { kind: "workerFinish"; agent: string; id: string; passed: boolean }
  | { kind: "heartbeat"; agent: string }
  | { kind: "accept" | "reject"; agent: string; id: string }
  | { kind: "lease"; agent: string; patterns: string[]; exclusive: boolean; task: string | null; ttlMs: number }
  | { kind: "unlease"; agent: string; patterns: string[] | "all" }
  | { kind: "touch"; agent: string }
  | { kind: "depend"; agent: string; id: string; on: string }
  | { kind: "tick"; ms: number };

/** One task's records as the op wrote them, in order (one commit each). */
export interface Trail {
  id: string;
  records: Task[];
}

export type Applied = { world: World; trail: Trail[] } & ({ ok: true } | { ok: false; refusal: Refusal });

export const actorOf = (agent: string): Actor => ({ agent, worktree: `/w/${agent}`, branch: agent, scope: "worktree" });

/** The context the store passes: ctxOf in task-store.ts, the grace of store.takeoverGrace(). */
export function ctxOf(cfg: Config, agent: string, now: number): OpContext {
  return { actor: actorOf(agent), now: new Date(now), ...(cfg.graceMs ? { takeoverGraceMs: cfg.graceMs } : {}) };
}

export type TaskOp = (t: Task, ctx: OpContext) => Outcome<Task>;
export type LeaseFollow = (set: LeaseSet, after: Task, ctx: OpContext) => Outcome<LeaseSet>;

/** The store's refusal (loadTask's not_found) for an id with no ref. */
export const notFound = (id: string): Refusal => ({ code: "not_found", message: `no task ${id}` });

export const unchanged = (w: World, refusal: Refusal): Applied => ({ world: w, trail: [], ok: false, refusal });

/** Lease operations one after the other, the first refusal wins: the store's own chain. */
export const chain = chainLeaseOps;

/** What the store writes of an outcome: the last step's record (writeSteps), or nothing. */
export function written<T>(before: T, out: { record: T; steps: { record: T }[] }): T {
  const stored = out.steps.length ? out.steps[out.steps.length - 1]!.record : before;
  // The caller is handed `out.record`; readers later get what was written. They must be one state.
  if (JSON.stringify(stored) !== JSON.stringify(out.record)) throw new Error(`the outcome's record is not the one its steps write: ${JSON.stringify(out.record)} vs ${JSON.stringify(stored)}`);
  return stored;
}

export function withTask(w: World, t: Task): ReadonlyMap<string, Task> {
  return new Map([...w.tasks, [t.id, t]]);
}

/** mutateTaskWithLeases (task-lease-store.ts): the task and its leases in one transaction. */
export function mutateTaskWithLeases(w: World, cfg: Config, agent: string, id: string, op: TaskOp, follow: LeaseFollow): Applied & { out?: Outcome<Task> } {
  const task = w.tasks.get(id);
  if (!task) return unchanged(w, notFound(id));
  const ctx = ctxOf(cfg, agent, w.now);
  const out = op(task, ctx);
  if (!out.ok) {
    // A lease that ran out for the last allowed time: the expiry and the failure are written anyway.
    const settled = settle(task, ctx);
    if (settled.steps.length === 0 || !isFinal(settled.record.status)) return { ...unchanged(w, out.refusal), out };
    const after = written(task, settled);
    const leases = followTask(w.leases, after, ctx);
    if (!leases.ok) throw new Error("followTask refused");
    return { world: { ...w, tasks: withTask(w, after), leases: written(w.leases, leases) }, trail: [{ id, records: settled.steps.map((s) => s.record) }], ok: false, refusal: out.refusal, out };
  }
  const leaseOut = chain(w.leases, ctx, [(s, c) => follow(s, out.record, c), (s, c) => followTask(s, out.record, c)]);
  if (!leaseOut.ok) return { ...unchanged(w, leaseOut.refusal), out };
  const after = written(task, out);
  return { world: { ...w, tasks: withTask(w, after), leases: written(w.leases, leaseOut) }, trail: [{ id, records: out.steps.map((s) => s.record) }], ok: true, out };
}

export const noFollow: LeaseFollow = (set) => ({ ok: true, record: set, steps: [] });
