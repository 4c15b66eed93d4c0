// What must hold after every step of test/core-model.test.ts, as the docs state the rules
// (docs/concepts.md, docs/claims.md): each check returns what it found wrong, or null.
import { EXIT_CODES } from "../../src/core/errors.ts";
import { fenceRefusal } from "../../src/core/fence.ts";
import { overlapWitness } from "../../src/core/glob-overlap.ts";
import { isLeaseLive, LeaseSet } from "../../src/core/lease.ts";
import { settleLeases } from "../../src/core/lease-ops.ts";
import { isFinal, Task, type TaskStatus } from "../../src/core/task.ts";
import { settle } from "../../src/core/task-ops.ts";
import { actorOf, ctxOf, type Applied, type Config, type Op, type World } from "./core-model-ops.ts";

const nobody = { agent: "", worktree: null, branch: null, scope: "primary" as const };

/**
 * The status changes the docs describe: a claim, its end (release, expiry, reclaim), a finish by
 * the holder or by anyone while nobody holds it, a submission to review and its verdict. A
 * finished task never changes again. Same-status steps (renew, depend, a failed verification) pass.
 */
const MOVES: Record<TaskStatus, readonly TaskStatus[]> = {
  todo: ["claimed", "review", "done", "failed", "cancelled"],
  claimed: ["todo", "review", "done", "failed", "cancelled"],
  review: ["todo", "done", "failed", "cancelled"],
  done: [],
  failed: [],
  cancelled: [],
};

export function deepFreeze<T>(o: T): T {
  if (o === null || typeof o !== "object" || Object.isFrozen(o)) return o;
  for (const v of Object.values(o as object)) deepFreeze(v);
  return Object.freeze(o);
}

/** Everything wrong with one step: the op's outcome against the world before it, then the world after. */
export function violations(pre: World, op: Op, r: Applied, cfg: Config, agents: readonly string[]): string[] {
  const out: string[] = [];
  if (!r.ok && !(r.refusal.code in EXIT_CODES)) out.push(`refusal code ${JSON.stringify(r.refusal.code)} is not in errors.ts`);
  if (!r.ok && r.trail.some((t) => t.records.some((x) => x.status !== "todo" && x.status !== "failed"))) {
    out.push(`a refused op wrote more than an expiry: ${JSON.stringify(r.trail)}`);
  }
  out.push(...trailProblems(pre, r));
  out.push(...grantProblems(pre, op, r, cfg));
  out.push(...holderProblems(pre, op, r, cfg));
  out.push(...refusalProblems(pre, op, r, cfg));
  out.push(...worldProblems(pre, r.world, cfg, agents));
  return out;
}

/** Each record written moves along MOVES from the one before, and names its own task. */
function trailProblems(pre: World, r: Applied): string[] {
  const out: string[] = [];
  const last = new Map<string, Task | undefined>();
  for (const { id, records } of r.trail) {
    let before = last.has(id) ? last.get(id) : pre.tasks.get(id);
    for (const rec of records) {
      if (rec.id !== id) out.push(`a step of ${id} wrote a record of ${rec.id}`);
      if (before && before.status !== rec.status && !MOVES[before.status].includes(rec.status)) out.push(`${id}: ${before.status} -> ${rec.status} is no transition the docs describe`);
      if (before && isFinal(before.status)) out.push(`${id} is ${before.status} and was written again (now ${rec.status})`);
      if (before && rec.fence < before.fence) out.push(`${id}: fence went back from ${before.fence} to ${rec.fence}`);
      before = rec;
    }
    last.set(id, before);
  }
  return out;
}

/**
 * A new grant (a higher fence) is made only where the rules allow it, and leases the task's scope.
 * Judged from the stored record with the rules written out here, not through the core's settle:
 * a bug there must not excuse itself.
 */
function grantProblems(pre: World, op: Op, r: Applied, cfg: Config): string[] {
  const out: string[] = [];
  for (const { id, records } of r.trail) {
    let prev = pre.tasks.get(id);
    for (const after of records) {
      const before = prev;
      prev = after;
      // A grant: a claim that was not there in the record before (renewals keep claimed_at).
      if (!before || !after.claim || (before.claim && before.claim.claimed_at === after.claim.claimed_at && before.claim.agent === after.claim.agent)) continue;
      if (op.kind !== "claim" && op.kind !== "claimNext") {
        out.push(`${op.kind} granted ${id} to ${after.claim.agent}`);
        continue;
      }
      const why = (s: string) => out.push(`${op.kind} granted ${id} to ${op.agent} (fence ${after.fence}) although ${s}`);
      // The conditions as they stood before the op (one grant per op: the task it took).
      const stored = pre.tasks.get(id)!;
      if (stored.status !== "todo" && stored.status !== "claimed") why(`it was ${stored.status}`);
      const c = stored.claim;
      // Another agent's claim stands for the takeover grace past its expiry; the caller's own, until it.
      if (c && Date.parse(c.expires_at) + (c.agent === op.agent ? 0 : cfg.graceMs) > pre.now) why(`${c.agent} held it until ${c.expires_at} (grace ${cfg.graceMs} ms)`);
      const attempts = stored.attempts + (c ? 1 : 0);
      if (attempts >= stored.max_attempts) why(`attempts ${attempts} reached max_attempts ${stored.max_attempts}`);
      if (after.attempts !== attempts) out.push(`${id}: after a grant attempts is ${after.attempts}, expected ${attempts}`);
      if (!(op.kind === "claim" && op.force)) {
        const open = (stored.after ?? []).filter((d) => pre.tasks.get(d)?.status !== "done");
        if (open.length) why(`it waits on ${open.join(", ")} (not done)`);
      }
      const held = liveHeld(pre, op.agent, id);
      if (held.length >= cfg.capacity) why(`${op.agent} held ${held.join(", ")} at capacity ${cfg.capacity}`);
      if (after.claim.agent !== op.agent) why(`the claim names ${after.claim.agent}`);
      if (after.fence !== before.fence + 1 || after.claim.fence !== after.fence) out.push(`${id}: granted with fence ${after.claim.fence} after fence ${before.fence}`);
      for (const p of after.scope) {
        const l = r.world.leases.leases.find((x) => x.pattern === p && x.agent === op.agent && x.task === id);
        if (!l) out.push(`${id} granted to ${op.agent} without its scope lease ${p}`);
        else if (l.exclusive !== (after.exclusive ?? cfg.exclusiveScope)) out.push(`${id}'s scope lease ${p} has exclusive ${l.exclusive}`);
      }
    }
  }
  return out;
}

/** The tasks other than `except` that `agent` holds with a live claim (capacity), counted here. */
function liveHeld(w: World, agent: string, except: string): string[] {
  return [...w.tasks.values()].filter((t) => t.id !== except && t.status === "claimed" && t.claim?.agent === agent && Date.parse(t.claim.expires_at) > w.now).map((t) => t.id);
}

/**
 * Why `agent` may not claim `id` now, by the rules written out (null: it may). `next`: for claim
 * --next, which passes over the caller's own live claims instead of renewing them.
 */
function whyNot(pre: World, cfg: Config, agent: string, id: string, force: boolean, next: boolean): string | null {
  const t = pre.tasks.get(id);
  if (!t) return "no such task";
  if (isFinal(t.status) || t.status === "review") return t.status;
  const c = t.claim;
  const renewal = !!c && c.agent === agent && Date.parse(c.expires_at) > pre.now;
  if (renewal && next) return "its own live claim";
  if (c && c.agent !== agent && Date.parse(c.expires_at) + cfg.graceMs > pre.now) return `held by ${c.agent}`;
  if (c && !renewal && t.attempts + 1 >= t.max_attempts) return "its expiry fails it";
  if (!renewal && !force) {
    const open = (t.after ?? []).filter((d) => pre.tasks.get(d)?.status !== "done");
    if (open.length) return `waits on ${open.join(", ")}`;
  }
  if (!renewal && liveHeld(pre, agent, id).length >= cfg.capacity) return "at capacity";
  // The scope lease: refused by another agent's lease in the way (live, or inside the grace),
  // except those serving this very task, which the grant ends first.
  const exclusive = t.exclusive ?? cfg.exclusiveScope;
  for (const p of t.scope) {
    for (const l of pre.leases.leases) {
      if (l.agent === agent || l.task === id || Date.parse(l.expires_at) + cfg.graceMs <= pre.now) continue;
      if ((exclusive || l.exclusive) && overlapWitness(p, l.pattern) !== null) return `${l.agent}'s lease ${l.pattern} is in the way`;
    }
  }
  return null;
}

/** A claim is refused exactly when the rules refuse it; claim --next finds nothing only when nothing is claimable. */
function refusalProblems(pre: World, op: Op, r: Applied, cfg: Config): string[] {
  if (op.kind === "claim") {
    const why = whyNot(pre, cfg, op.agent, op.id, op.force, false);
    if (r.ok && why) return [`claim of ${op.id} by ${op.agent} went through although ${why}`];
    if (!r.ok && !why) return [`claim of ${op.id} by ${op.agent} was refused (${r.refusal.code}: ${r.refusal.message}) although nothing stands in its way`];
  }
  if (op.kind === "claimNext" && !r.ok) {
    for (const id of pre.tasks.keys()) {
      if (!whyNot(pre, cfg, op.agent, id, false, true)) return [`claim --next by ${op.agent} was refused (${r.refusal.code}) although ${id} was claimable`];
    }
  }
  return [];
}

/**
 * Who may do what to a task (docs/concepts.md): renew and release are the live holder's; done,
 * fail, cancel and a submission are the holder's or anyone's while nobody holds it, except the
 * agent a reclaim took it from (the creator may cancel whatever); nobody accepts its own review
 * unless the policy allows it. Judged from the stored record, as grantProblems.
 */
function holderProblems(pre: World, op: Op, r: Applied, cfg: Config): string[] {
  if (!r.ok || !("id" in op) || op.kind === "claim" || op.kind === "create" || op.kind === "depend") return [];
  const t = pre.tasks.get(op.id);
  if (!t) return [`${op.kind} of ${op.id} succeeded, but there is no such task`];
  const c = t.claim;
  const own = !!c && c.agent === op.agent && Date.parse(c.expires_at) > pre.now;
  const other = !!c && c.agent !== op.agent && Date.parse(c.expires_at) + cfg.graceMs > pre.now;
  const bound = !!t.reclaimed && !c && t.reclaimed.fence === t.fence && t.reclaimed.agent === op.agent;
  const say = (s: string) => [`${op.kind} of ${op.id} by ${op.agent} succeeded although ${s}`];
  switch (op.kind) {
    case "renew":
    case "release":
      return own ? [] : say(`${op.agent} held no live claim on it (${c ? `${c.agent} until ${c.expires_at}` : "unclaimed"})`);
    case "cancel":
    case "done":
    case "fail":
    case "submit":
    case "workerFinish":
      // The creator may cancel whatever it asked for; anyone else cancels as it finishes.
      if (op.kind === "cancel" && t.created_by === op.agent) return [];
      if (other) return say(`${c!.agent} held it until ${c!.expires_at}`);
      if (bound) return say(`${t.reclaimed!.by} reclaimed it from ${op.agent} (fence ${t.fence})`);
      if (op.kind === "done" && t.status === "review") return say("it was in review");
      return [];
    case "accept":
      return t.review?.submitted_by === op.agent && !cfg.allowSelf ? say("it accepted its own submission") : [];
    default:
      return [];
  }
}

/** What holds of any world: records, fences, claims, leases, and settling. */
function worldProblems(pre: World, w: World, cfg: Config, agents: readonly string[]): string[] {
  const out: string[] = [];
  const now = new Date(w.now);
  const liveClaims = new Map<string, NonNullable<Task["claim"]>>();
  for (const [id, t] of w.tasks) {
    const p = pre.tasks.get(id);
    if (p !== t && !Task.safeParse(t).success) out.push(`${id}: record does not fit the schema`);
    if (p && isFinal(p.status) && p !== t) out.push(`${id} was ${p.status} and changed`);
    if (p && t.fence < p.fence) out.push(`${id}: fence went back from ${p.fence} to ${t.fence}`);
    if ((t.status === "claimed") !== (t.claim !== null)) out.push(`${id}: status ${t.status} with claim ${JSON.stringify(t.claim)}`);
    if (t.claim && t.claim.fence !== t.fence) out.push(`${id}: claim fence ${t.claim.fence}, task fence ${t.fence}`);
    if (t.attempts > t.max_attempts) out.push(`${id}: attempts ${t.attempts} past max_attempts ${t.max_attempts}`);
    if (t.claim && Date.parse(t.claim.expires_at) > w.now) liveClaims.set(id, t.claim);
    out.push(...settleProblems(t, cfg, w.now, agents));
    out.push(...fenceProblems(t, now, agents));
  }
  out.push(...leaseProblems(pre, w, liveClaims, cfg));
  return out;
}

/** Settling twice is settling once, never makes a task done, never touches a finished one. */
function settleProblems(t: Task, cfg: Config, now: number, agents: readonly string[]): string[] {
  const out: string[] = [];
  const ctxs = [{ actor: nobody, now: new Date(now) }, ...agents.map((a) => ctxOf(cfg, a, now))];
  for (const ctx of ctxs) {
    const once = settle(t, ctx);
    const twice = settle(once.record, ctx);
    if (twice.steps.length || twice.record !== once.record) out.push(`${t.id}: settling twice for ${ctx.actor.agent || "a reader"} differs from settling once`);
    if (isFinal(t.status) && (once.steps.length || once.record !== t)) out.push(`${t.id}: settling changed a ${t.status} task`);
    if (once.record.status !== t.status && !(t.status === "claimed" && (once.record.status === "todo" || once.record.status === "failed"))) {
      out.push(`${t.id}: settling moved ${t.status} to ${once.record.status}`);
    }
    if (once.record.fence !== t.fence) out.push(`${t.id}: settling changed the fence`);
  }
  return out;
}

/** The holder's current fence passes the pre-push check; an older one, or anyone else, is refused. */
function fenceProblems(t: Task, now: Date, agents: readonly string[]): string[] {
  const c = t.claim;
  if (!c || Date.parse(c.expires_at) <= now.getTime()) return [];
  const out: string[] = [];
  const holder = actorOf(c.agent);
  const current = fenceRefusal(t, holder, now, c.fence);
  if (current) out.push(`${t.id}: the holder's push with the current fence ${c.fence} is refused: ${current.message}`);
  for (let f = 0; f < c.fence; f++) {
    const stale = fenceRefusal(t, holder, now, f);
    if (!stale) out.push(`${t.id}: a push with stale fence ${f} (current ${c.fence}) is let through`);
    else if (!(stale.code in EXIT_CODES)) out.push(`${t.id}: fence refusal code ${stale.code}`);
  }
  for (const a of agents) if (a !== c.agent && !fenceRefusal(t, actorOf(a), now, c.fence)) out.push(`${t.id}: ${a} may push for ${c.agent}'s claim`);
  return out;
}

/**
 * Live leases: no two of different agents overlap where either is exclusive; none serves a task
 * its holder does not hold (finished, in review, nobody's or another agent's); a holder's task
 * leases expire with its claim.
 */
function leaseProblems(pre: World, w: World, liveClaims: Map<string, NonNullable<Task["claim"]>>, cfg: Config): string[] {
  const out: string[] = [];
  const now = new Date(w.now);
  if (w.leases !== pre.leases && !LeaseSet.safeParse(w.leases).success) out.push("the lease set does not fit the schema");
  const live = w.leases.leases.filter((l) => isLeaseLive(l, now));
  for (let i = 0; i < live.length; i++) {
    for (let j = i + 1; j < live.length; j++) {
      const a = live[i]!;
      const b = live[j]!;
      if (a.agent === b.agent || (!a.exclusive && !b.exclusive)) continue;
      const witness = overlapWitness(a.pattern, b.pattern);
      if (witness !== null) out.push(`live leases overlap on ${witness}: ${a.agent} ${a.pattern}${a.exclusive ? " (exclusive)" : ""} for ${a.task}, ${b.agent} ${b.pattern}${b.exclusive ? " (exclusive)" : ""} for ${b.task}`);
    }
  }
  for (const l of live) {
    if (l.task === null) continue;
    const t = w.tasks.get(l.task);
    if (t && isFinal(t.status)) out.push(`${l.agent}'s lease ${l.pattern} serves ${t.id}, which is ${t.status}`);
    const c = liveClaims.get(l.task);
    if (c && c.agent !== l.agent) out.push(`${l.agent}'s lease ${l.pattern} serves ${l.task}, which ${c.agent} holds`);
    if (c && c.agent === l.agent && l.expires_at !== c.expires_at) out.push(`${l.agent}'s lease ${l.pattern} for ${l.task} expires at ${l.expires_at}, its claim at ${c.expires_at}`);
    // Justified only while its holder holds the task (lease-for-task.ts: lease refuses, doctor
    // removes), written out here; a lease taken before its task was there stands on its own TTL.
    const holds = t?.status === "claimed" && t.claim?.agent === l.agent && Date.parse(t.claim.expires_at) > w.now;
    if (t && !holds && t.created_at < l.acquired_at) out.push(`${l.agent}'s lease ${l.pattern} serves ${t.id}, which ${l.agent} does not hold (${t.status}${t.claim ? `, ${t.claim.agent}'s claim until ${t.claim.expires_at}` : ""})`);
  }
  const sctx = ctxOf(cfg, "", w.now);
  const once = settleLeases(w.leases, sctx);
  const twice = settleLeases(once.record, sctx);
  if (twice.steps.length) out.push("settling the leases twice differs from settling once");
  return out;
}
