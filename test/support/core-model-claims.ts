// Claims in test/core-model.test.ts's model: `claim` and `claim --next` through the core as the
// store makes them (task-actions.ts, dependency-actions.ts, task-store.ts): capacity first, the
// dependency check on the task as it stands, the scope leased in the same transaction.
import { blockedRefusal, blockingEdges, dependenciesOf } from "../../src/core/dependency-graph.ts";
import type { Refusal } from "../../src/core/errors.ts";
import { acquireLeases, releaseTaskLeases } from "../../src/core/lease-ops.ts";
import type { Task } from "../../src/core/task.ts";
import { capacityRefusal } from "../../src/core/capacity.ts";
import { chooseCandidate, contendersAmong, MAX_POOL } from "../../src/core/candidate-choice.ts";
import { claimCandidates, claimTask, holdsLive, isLive } from "../../src/core/task-ops.ts";
import { chain, ctxOf, mutateTaskWithLeases, unchanged, type Applied, type Config, type LeaseFollow, type Op, type TaskOp, type Trail, type World } from "./core-model-world.ts";

/** leaseScope (task-actions.ts): the holder leases the task's scope until the claim expires. */
export function leaseScope(cfg: Config): LeaseFollow {
  return (set, t, ctx) => {
    const claim = t.claim;
    if (t.status !== "claimed" || !claim || claim.agent !== ctx.actor.agent) return { ok: true, record: set, steps: [] };
    const ttlMs = Math.max(1, Date.parse(claim.expires_at) - ctx.now.getTime());
    const exclusive = t.exclusive ?? cfg.exclusiveScope;
    return chain(set, ctx, [
      (s, c) => releaseTaskLeases(s, t.id, c, c.actor.agent),
      (s, c) => (t.scope.length ? acquireLeases(s, { patterns: t.scope, exclusive, task: t.id, ttlMs, reason: `task ${t.id}` }, c) : { ok: true, record: s, steps: [] }),
    ]);
  };
}

/** capacityProblem (task-actions.ts): the stored claimed tasks (heldBy judges expiry), then capacityRefusal. */
function capacityProblemOf(w: World, cfg: Config, agent: string, claiming: string | null): Refusal | null {
  if (!Number.isFinite(cfg.capacity)) return null;
  const claimed = [...w.tasks.values()].filter((t) => t.status === "claimed");
  return capacityRefusal(claimed, agent, cfg.capacity, claiming, new Date(w.now));
}

/** capacityGuard (task-actions.ts): refused for capacity only where the op grants a new claim. */
function capacityGuard(refusal: Refusal | null, op: TaskOp): TaskOp {
  return (t, ctx) => {
    const out = op(t, ctx);
    const fresh = out.ok && out.record.claim?.agent === ctx.actor.agent && !holdsLive(t, ctx.actor.agent, ctx.now);
    return fresh && refusal ? { ok: false, refusal } : out;
  };
}

/** claimReporting -> claimOnly -> claimChecked (dependency-actions.ts), with the scope leased. */
export function claim(w: World, cfg: Config, op: Extract<Op, { kind: "claim" }>): Applied {
  const full = capacityProblemOf(w, cfg, op.agent, op.id);
  const grant: TaskOp = (t, ctx) => claimTask(t, ctx, op.ttlMs);
  const checked: TaskOp = op.force
    ? grant
    : (t, ctx) => {
        // Dependencies as stored (a done dependency stays done), checked on the task as it stands.
        if (!dependenciesOf(t).length || holdsLive(t, ctx.actor.agent, ctx.now)) return grant(t, ctx);
        const edges = blockingEdges(t, w.tasks, ctx.now);
        return edges.length ? { ok: false, refusal: blockedRefusal(t, edges) } : grant(t, ctx);
      };
  return mutateTaskWithLeases(w, cfg, op.agent, op.id, capacityGuard(full, checked), leaseScope(cfg));
}

/** The refusals after which claimNext (task-store.ts) goes on to the next candidate. */
const NEXT_CANDIDATE = new Set(["held_by_other", "final_state", "not_found", "blocked", "wrong_state", "addressed_elsewhere"]);

/** claimNextReporting -> claimReady -> claimNext: the best ready task, or the next one after a lost race. */
export function claimNext(w: World, cfg: Config, op: Extract<Op, { kind: "claimNext" }>): Applied {
  const full = capacityProblemOf(w, cfg, op.agent, null);
  if (full) return unchanged(w, full);
  const ctx = ctxOf(cfg, op.agent, w.now);
  const tried = new Set<string>();
  // A refusal that still wrote (an expiry that failed the candidate) stays written: the next try sees it.
  let world = w;
  const trail: Trail[] = [];
  for (let lost = 0; ; ) {
    const tasks = [...world.tasks.values()];
    const ready = (t: Task) => {
      const edges = dependenciesOf(t).length ? blockingEdges(t, world.tasks, ctx.now) : [];
      return edges.length ? blockedRefusal(t, edges) : null;
    };
    const candidates = claimCandidates(tasks, ctx).filter((t) => !tried.has(t.id) && !ready(t));
    const next = cfg.spread
      ? chooseCandidate(candidates.slice(0, MAX_POOL), { now: ctx.now, random: op.random, contenders: contendersAmong(tasks, op.agent, ctx.now), lost })
      : candidates[0];
    if (!next) return { world, trail, ok: false, refusal: { code: "no_task_ready", message: "no task is ready to claim" } };
    tried.add(next.id);
    const guarded: TaskOp = (t, c) => {
      if (t.claim && t.claim.agent === c.actor.agent && isLive(t, c.now)) {
        return { ok: false, refusal: { code: "held_by_other", message: `task ${t.id} was just claimed by another call of ${t.claim.agent}` } };
      }
      const why = ready(t);
      return why ? { ok: false, refusal: why } : claimTask(t, c, op.ttlMs);
    };
    const r = mutateTaskWithLeases(world, cfg, op.agent, next.id, guarded, leaseScope(cfg));
    world = r.world;
    trail.push(...r.trail);
    if (r.ok || !NEXT_CANDIDATE.has(r.refusal.code)) return { ...r, world, trail };
    if (r.refusal.code === "held_by_other") lost++;
  }
}

