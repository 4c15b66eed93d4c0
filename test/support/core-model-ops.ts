// The operations of test/core-model.test.ts's model, each applied through the pure core exactly
// as the store applies it (core-model-world.ts; claims in core-model-claims.ts).
import { findCycle, addDependency } from "../../src/core/dependency-graph.ts";
import type { LeaseSet } from "../../src/core/lease.ts";
import { acquireLeases, releaseLeases, releaseTaskLeases, renewLeases } from "../../src/core/lease-ops.ts";
import { acceptReview, rejectReview, submitForReview, submitUnattended } from "../../src/core/review.ts";
import { claimExtensionDue, dueTaskIds } from "../../src/core/task-leases.ts";
import type { Task } from "../../src/core/task.ts";
import { overlapWitness } from "../../src/core/glob-overlap.ts";
import { leaseForTaskRefusal } from "../../src/core/lease-for-task.ts";
import { cancelTask, completeTask, createTask, failTask, reclaimTask, releaseTask, renewTask } from "../../src/core/task-ops.ts";
import { claim, claimNext, leaseScope } from "./core-model-claims.ts";
import { ctxOf, mutateTaskWithLeases, noFollow, notFound, unchanged, withTask, written, type Applied, type Config, type LeaseFollow, type Op, type Trail, type World } from "./core-model-world.ts";

export type { Applied, Config, Op, World } from "./core-model-world.ts";
export { actorOf, ctxOf } from "./core-model-world.ts";

/** endScope (task-actions.ts): the task left its holder, its leases end. */
const endScope = (id: string): LeaseFollow => (set, _t, ctx) => releaseTaskLeases(set, id, ctx);

const verificationOf = (agent: string, passed: boolean, now: number) => ({ command: "true", cwd: `/w/${agent}`, passed, exit_code: passed ? 0 : 1, signal: null, timed_out: false, duration_ms: 5, output_tail: "", truncated_bytes: 0, at: new Date(now).toISOString() });

/**
 * A worker finishing its task (src/work/complete.ts): submitUnattended (a failed verification
 * fails the task) with the context that code builds, and the task's leases released.
 */
function workerFinish(w: World, cfg: Config, op: Extract<Op, { kind: "workerFinish" }>): Applied {
  const task = w.tasks.get(op.id);
  if (!task) return unchanged(w, notFound(op.id));
  const ctx = ctxOf(cfg, op.agent, w.now);
  const out = submitUnattended(task, ctx, { verification: verificationOf(op.agent, op.passed, w.now), commit: null, diff: null, note: "results" });
  if (!out.ok) return unchanged(w, out.refusal);
  const leases = releaseTaskLeases(w.leases, op.id, ctx);
  if (!leases.ok) return unchanged(w, leases.refusal);
  return { world: { ...w, tasks: withTask(w, written(task, out)), leases: written(w.leases, leases) }, trail: [{ id: op.id, records: out.steps.map((s) => s.record) }], ok: true };
}

/** extendDueClaims (claim-extend.ts): the holder's claims due for extension, after a lease write. */
function extendCovering(w: World, cfg: Config, agent: string, covers: (l: LeaseSet["leases"][number]) => boolean): { world: World; trail: Trail[] } {
  const { ids } = dueTaskIds(w.leases.leases, agent, new Date(w.now), covers);
  let world = w;
  const trail: Trail[] = [];
  for (const id of ids) {
    const t = world.tasks.get(id);
    if (!t || !claimExtensionDue(t, agent, new Date(world.now))) continue;
    const r = mutateTaskWithLeases(world, cfg, agent, id, (x, ctx) => (claimExtensionDue(x, agent, ctx.now) ? renewTask(x, ctx) : { ok: true, record: x, steps: [] }), noFollow);
    if (r.ok) {
      world = r.world;
      trail.push(...r.trail);
    }
  }
  return { world, trail };
}

/** lease (lease-actions.ts): taskForLease's check (the caller holds the task, or it is not here), the grant, then claims it concerns extended. */
function lease(w: World, cfg: Config, op: Extract<Op, { kind: "lease" }>): Applied {
  const stored = op.task === null ? undefined : w.tasks.get(op.task);
  let until: { expiresAt: string; ttlMs: number } | undefined;
  if (stored) {
    const refusal = leaseForTaskRefusal(stored, ctxOf(cfg, op.agent, w.now));
    if (refusal) return unchanged(w, refusal);
    // Not refused: the caller holds it (lease-for-task.ts), and the lease takes its claim's expiry.
    until = { expiresAt: stored.claim!.expires_at, ttlMs: stored.claim!.ttl_ms };
  }
  const req = { patterns: op.patterns, exclusive: op.exclusive, task: op.task, ttlMs: op.ttlMs, reason: null, ...(until ? { until } : {}) };
  const out = acquireLeases(w.leases, req, ctxOf(cfg, op.agent, w.now));
  if (!out.ok) return unchanged(w, out.refusal);
  const leased = { ...w, leases: written(w.leases, out) };
  const ext = extendCovering(leased, cfg, op.agent, (l) => l.task === op.task || op.patterns.some((p) => overlapWitness(p, l.pattern) !== null));
  return { ...ext, ok: true };
}

/** unlease (lease-actions.ts): what the caller holds of the patterns, or the refusal naming them all. */
function unlease(w: World, cfg: Config, op: Extract<Op, { kind: "unlease" }>): Applied {
  const mine = w.leases.leases.filter((l) => l.agent === op.agent).map((l) => l.pattern);
  const req = op.patterns === "all" ? { all: true } : { patterns: op.patterns.some((p) => mine.includes(p)) ? op.patterns.filter((p) => mine.includes(p)) : op.patterns };
  const out = releaseLeases(w.leases, req, ctxOf(cfg, op.agent, w.now));
  if (!out.ok) return unchanged(w, out.refusal);
  return { world: { ...w, leases: written(w.leases, out) }, trail: [], ok: true };
}

/** depend (dependency-actions.ts): both tasks exist, no cycle through the whole graph. */
function depend(w: World, cfg: Config, op: Extract<Op, { kind: "depend" }>): Applied {
  const task = w.tasks.get(op.id);
  if (!task) return unchanged(w, notFound(op.id));
  if (!w.tasks.has(op.on)) return unchanged(w, notFound(op.on));
  const out = addDependency(task, op.on, ctxOf(cfg, op.agent, w.now));
  if (!out.ok) return unchanged(w, out.refusal);
  if (!out.steps.length) return { world: w, trail: [], ok: true };
  const cycle = findCycle(w.tasks as Map<string, Task>, op.id, op.on);
  if (cycle) return unchanged(w, { code: "cycle", message: `cycle ${cycle.join(" -> ")}` });
  return { world: { ...w, tasks: withTask(w, written(task, out)) }, trail: [{ id: op.id, records: out.steps.map((s) => s.record) }], ok: true };
}

export function apply(w: World, cfg: Config, op: Op): Applied {
  const follow = (id: string) => endScope(id);
  switch (op.kind) {
    case "tick":
      return { world: { ...w, now: w.now + op.ms }, trail: [], ok: true };
    case "create": {
      if (w.tasks.has(op.id)) return unchanged(w, { code: "exists", message: `task ${op.id} already exists` });
      const missing = op.after.find((d) => !w.tasks.has(d));
      if (missing) return unchanged(w, notFound(missing));
      const out = createTask({ id: op.id, objective: `objective of ${op.id}`, priority: op.priority, scope: op.scope, maxAttempts: op.maxAttempts, exclusive: op.exclusive, after: op.after }, ctxOf(cfg, op.agent, w.now));
      if (!out.ok) return unchanged(w, out.refusal);
      const t = written(out.record, out);
      return { world: { ...w, tasks: withTask(w, t) }, trail: [{ id: op.id, records: out.steps.map((s) => s.record) }], ok: true };
    }
    case "claim":
      return claim(w, cfg, op);
    case "claimNext":
      return claimNext(w, cfg, op);
    case "renew":
      return mutateTaskWithLeases(w, cfg, op.agent, op.id, (t, ctx) => renewTask(t, ctx, op.ttlMs), leaseScope(cfg));
    case "release":
      return mutateTaskWithLeases(w, cfg, op.agent, op.id, releaseTask, follow(op.id));
    case "done":
      return mutateTaskWithLeases(w, cfg, op.agent, op.id, (t, ctx) => completeTask(t, ctx, { note: "done" }), follow(op.id));
    case "fail":
      return mutateTaskWithLeases(w, cfg, op.agent, op.id, (t, ctx) => failTask(t, ctx, "gave up"), follow(op.id));
    case "cancel":
      return mutateTaskWithLeases(w, cfg, op.agent, op.id, (t, ctx) => cancelTask(t, ctx, "not needed"), follow(op.id));
    case "reclaim":
      return mutateTaskWithLeases(w, cfg, op.agent, op.id, (t, ctx) => reclaimTask(t, ctx, "stuck", op.seen), follow(op.id));
    case "workerFinish":
      return workerFinish(w, cfg, op);
    case "heartbeat": {
      // The holder's heartbeat (extendAllDue): every claim of its that is due, extended.
      const ext = extendCovering(w, cfg, op.agent, () => true);
      return { ...ext, ok: true };
    }
    case "submit": {
      const verification = verificationOf(op.agent, op.passed, w.now);
      return mutateTaskWithLeases(w, cfg, op.agent, op.id, (t, ctx) => submitForReview(t, ctx, { verification, commit: null, diff: null }), noFollow);
    }
    case "accept":
      return mutateTaskWithLeases(w, cfg, op.agent, op.id, (t, ctx) => acceptReview(t, ctx, null, { allowSelf: cfg.allowSelf }), noFollow);
    case "reject":
      return mutateTaskWithLeases(w, cfg, op.agent, op.id, (t, ctx) => rejectReview(t, ctx, "needs work"), noFollow);
    case "lease":
      return lease(w, cfg, op);
    case "unlease":
      return unlease(w, cfg, op);
    case "touch": {
      // A pre-edit hook: the agent's free-standing leases renewed once a third through their time.
      const out = renewLeases(w.leases, ctxOf(cfg, op.agent, w.now));
      if (!out.ok) return unchanged(w, out.refusal);
      return { world: { ...w, leases: written(w.leases, out) }, trail: [], ok: true };
    }
    case "depend":
      return depend(w, cfg, op);
  }
}

