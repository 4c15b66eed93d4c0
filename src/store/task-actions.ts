// The task operations every front end offers (CLI, MCP, hooks), each one call: resolve input,
// run the pure operation under compare-and-swap, return the new record. A task's scope globs are
// file leases of its holder, changed in the same transaction as the task (task-lease-store.ts).
import { parseDuration } from "../core/duration.ts";
import { fail, HandoffError, type Refusal } from "../core/errors.ts";
import { isIgnored } from "../core/lease-policy.ts";
import type { LeaseSet } from "../core/lease.ts";
import { acquireLeases, chainLeaseOps, releaseTaskLeases } from "../core/lease-ops.ts";
import type { Outcome } from "../core/outcome.ts";
import type { Task } from "../core/task.ts";
import {
  cancelTask,
  completeTask,
  failTask,
  holdsLive,
  reclaimTask,
  releaseTask,
  renewTask,
  type OpContext,
} from "../core/task-ops.ts";
import { resolveCommit } from "../git/commits.ts";
import { catchEvent, recordCatches } from "./catch-log.ts";
import { loadPolicy } from "./lease-store.ts";
import type { Store } from "./store.ts";
import type { Overlap } from "../core/claim-overlap.ts";
import { overlapsOfClaim } from "./claim-overlaps.ts";
import { capacityOf, capacityRefusal, type ClaimedTask } from "../core/capacity.ts";
import { loadAgent } from "./agent-store.ts";
import { storedClaimedTasks } from "./task-listing.ts";
import { mutateTaskWithLeases } from "./task-lease-store.ts";
import { claimChecked, claimReady } from "./dependency-actions.ts";
import { WHY_PASSED_OVER } from "./newer-claims.ts";
import type { CasOptions } from "./store.ts";
import { inCapacityTurn } from "./capacity-turn.ts";

function ttlOf(store: Store, ttl: string | undefined): number {
  return ttl === undefined ? store.config.claimTtlMs : parseDuration(ttl, "--ttl");
}

/**
 * After a claim or renewal: the holder leases the task's scope until the claim expires, and leases
 * of the task still held by anyone else (a previous holder whose claim expired) end.
 */
function leaseScope(store: Store) {
  const policy = loadPolicy(store);
  return (set: LeaseSet, t: Task, ctx: OpContext): Outcome<LeaseSet> => {
    const patterns = t.scope.filter((g) => !isIgnored(policy, g));
    const claim = t.claim;
    if (t.status !== "claimed" || !claim || claim.agent !== ctx.actor.agent) return { ok: true, record: set, steps: [] };
    const ttlMs = Math.max(1, Date.parse(claim.expires_at) - ctx.now.getTime());
    const exclusive = t.exclusive ?? store.config.exclusiveScope;
    return chainLeaseOps(set, ctx, [
      (s, c) => releaseTaskLeases(s, t.id, c, c.actor.agent),
      (s, c) => (patterns.length ? acquireLeases(s, { patterns, exclusive, task: t.id, ttlMs, reason: `task ${t.id}` }, c) : { ok: true, record: s, steps: [] }),
    ]);
  };
}

/** After the task left its holder (released, done, failed, cancelled, reclaimed): its leases end. */
function endScope(id: string) {
  return (set: LeaseSet, _t: Task, ctx: OpContext) => releaseTaskLeases(set, id, ctx);
}

/** Every claim also leases the task's scope, in the same transaction. */
const withLeases = (s: Store, id: string, op: (t: Task, ctx: OpContext) => Outcome<Task>, o: CasOptions) => mutateTaskWithLeases(s, id, op, leaseScope(s), o);

/** A granted claim and the other live work its scope meets (advisory, never a refusal). */
export interface ClaimReport {
  task: Task;
  overlaps: Overlap[];
  /** claim --next: ready tasks passed over because the remote holds them in a newer format. */
  skipped_newer?: number;
}

/**
 * Why the caller may not take one more task (at_capacity), or null; and the claimed tasks it read,
 * as stored, not settled: heldBy judges the caller's claims' expiry itself, and the overlap
 * advisory that reads them next judges other agents' with the takeover grace (settled by this
 * clock alone, a claim inside the grace was gone from them).
 */
async function capacityProblem(store: Store, claiming: string | null): Promise<{ refusal: Refusal | null; claimed: readonly ClaimedTask[] }> {
  const [claimed, me] = await Promise.all([storedClaimedTasks(store), loadAgent(store, store.actor.agent)]);
  return { refusal: capacityRefusal(claimed, store.actor.agent, capacityOf(me?.record ?? null, store.config.maxConcurrent), claiming, store.now()), claimed };
}

async function checkCapacity(store: Store, claiming: string | null): Promise<void> {
  const { refusal } = await capacityProblem(store, claiming);
  if (refusal) throw new HandoffError(refusal);
}

/**
 * The claim operation, refused for capacity only where it would grant a new claim: a task someone
 * else holds, a blocked or a finished one is refused for that reason first, which says more.
 */
function capacityGuard(refusal: Refusal | null, op: (t: Task, ctx: OpContext) => Outcome<Task>) {
  return (t: Task, ctx: OpContext): Outcome<Task> => {
    const out = op(t, ctx);
    // A new grant: the caller's own expired claim counts for nothing (it is not among the held).
    const fresh = out.ok && out.record.claim?.agent === ctx.actor.agent && !holdsLive(t, ctx.actor.agent, ctx.now);
    return fresh && refusal ? { ok: false, refusal } : out;
  };
}

export interface ClaimOptions {
  ttl?: string;
  /** Claim even though the caller already holds as many tasks as its capacity. */
  overCapacity?: boolean;
  /**
   * `claim --next` only: false when nothing ready in this clone is the answer, because the caller
   * follows the remote's queue itself (a worker's shared look, follow-queue.ts).
   */
  refresh?: boolean;
  /** `claim --next` only: tasks the caller will not take again (a worker that could not set one up). */
  skip?: { has(id: string): boolean };
  /**
   * `claim --next` only: why the caller passes over a task it could otherwise take (a worker that
   * could not finish it here, worker-choice.ts), or null. Asked of each candidate, and again on
   * the candidate as it stands inside the compare-and-swap.
   */
  passOver?: (candidate: Task) => Refusal | null;
}

/** `claim` with its overlap advisory: what every front end should show after a claim (the capacity check and the claim in one turn: capacity-turn.ts). */
export async function claimReporting(store: Store, id: string, opts: ClaimOptions & { force?: boolean } = {}): Promise<ClaimReport> {
  const { task, granted, checked } = await inCapacityTurn(store, !!opts.overCapacity, async () => {
    const checked = opts.overCapacity ? null : await capacityProblem(store, id);
    return { ...(await claimOnly(store, id, opts, checked?.refusal ?? null)), checked };
  });
  // Claiming a task one holds renews it: the overlaps are shown again but logged once, at the
  // grant, so `stats` does not count them at every renewal.
  return { task, overlaps: await overlapsOfClaim(store, task, checked?.claimed, { log: granted }) };
}

/** `claim --next` / `ready --claim` with its overlap advisory. */
export async function claimNextReporting(store: Store, opts: ClaimOptions = {}): Promise<ClaimReport> {
  // Not the capacity check's listing for the advisory: finding nothing ready may refresh from the
  // remote, which brings other clones' claims.
  const newer = new Set<string>();
  let task: Task;
  try {
    task = await inCapacityTurn(store, !!opts.overCapacity, async () => {
      if (!opts.overCapacity) await checkCapacity(store, null);
      return claimNextOnly(store, opts, newer);
    });
  } catch (e) {
    if (!(e instanceof HandoffError) || e.code !== "no_task_ready" || !newer.size) throw e;
    fail("no_task_ready", `${e.message}; ${newer.size} ready task(s) skipped (${[...newer].join(", ")}): ${WHY_PASSED_OVER}; upgrade to take them`, { skipped_newer: newer.size }, e.refusal.suggestions);
  }
  return { task, overlaps: await overlapsOfClaim(store, task), ...(newer.size ? { skipped_newer: newer.size } : {}) };
}

/**
 * Claims `id`; overlaps are logged for `stats` (claimReporting also returns them). Capacity is
 * checked only when asked (`overCapacity: false`): front ends not yet offering --over-capacity
 * keep their behaviour; the CLI goes through claimReporting, which checks it by default.
 */
export async function claim(store: Store, id: string, opts: ClaimOptions & { force?: boolean } = {}): Promise<Task> {
  return (await claimReporting(store, id, { ...opts, overCapacity: opts.overCapacity ?? true })).task;
}

/** The best ready task, claimed (overlaps logged; capacity as for `claim`). */
export async function claimNextTask(store: Store, opts: ClaimOptions = {}): Promise<Task> {
  return (await claimNextReporting(store, { ...opts, overCapacity: opts.overCapacity ?? true })).task;
}

/** Refused while a dependency is not done unless `force`; records the claimer's HEAD as base. */
async function claimOnly(store: Store, id: string, opts: { ttl?: string; force?: boolean } = {}, full: Refusal | null = null): Promise<{ task: Task; granted: boolean }> {
  const ttl = ttlOf(store, opts.ttl);
  // Whether the write that landed granted the claim (a `claimed` step) or renewed the caller's
  // own: the compare-and-swap may run the operation more than once, and its last run landed.
  let granted = false;
  const observed = (op: (t: Task, ctx: OpContext) => Outcome<Task>) => (t: Task, ctx: OpContext): Outcome<Task> => {
    const out = op(t, ctx);
    granted = out.ok && out.steps.some((step) => step.event.type === "claimed");
    return out;
  };
  const mutate = (s: Store, i: string, op: (t: Task, ctx: OpContext) => Outcome<Task>, o: CasOptions) => withLeases(s, i, observed(full ? capacityGuard(full, op) : op), o);
  try {
    const task = await claimChecked(store, id, ttl, { force: !!opts.force, mutate });
    return { task, granted };
  } catch (e) {
    // A duplicate claim (or one on a blocked task) caught: logged for `stats` (catch-log.ts).
    if (e instanceof HandoffError && (e.code === "held_by_other" || e.code === "blocked")) {
      const holder = e.refusal.data?.holder;
      await recordCatches(store, [catchEvent(store, "claim_refused", { task: id, code: e.code, ...(typeof holder === "string" ? { holder } : {}) })]);
    }
    throw e;
  }
}

/** The best task whose dependencies are all done, its scope leased. */
async function claimNextOnly(store: Store, opts: Pick<ClaimOptions, "ttl" | "refresh" | "skip" | "passOver"> = {}, newer?: Set<string>): Promise<Task> {
  const ttl = ttlOf(store, opts.ttl);
  try {
    return await claimReady(store, ttl, withLeases, opts.skip, newer, opts.passOver);
  } catch (e) {
    // Nothing ready here may only mean this clone has not seen the remote's tasks yet.
    const remote = e instanceof HandoffError && e.code === "no_task_ready" && opts.refresh !== false ? await store.syncRemote() : null;
    if (!remote || !store.remoteGate) throw e;
    const r = await store.remoteGate.refresh(store, remote);
    // Even when this refresh applied nothing, a concurrent one of this clone may have.
    if (!r.ok) throw e;
    return claimReady(store, ttl, withLeases, opts.skip, newer, opts.passOver);
  }
}

/** `defer`: the renewal may wait for the next push the push budget allows (a lease with time to spare). */
export function renew(store: Store, id: string, opts: { ttl?: string; defer?: boolean } = {}): Promise<Task> {
  const ttl = opts.ttl === undefined ? undefined : parseDuration(opts.ttl, "--ttl");
  return mutateTaskWithLeases(store, id, (t, ctx) => renewTask(t, ctx, ttl), leaseScope(store), opts.defer ? { deferrable: true } : {});
}

export function release(store: Store, id: string): Promise<Task> {
  return mutateTaskWithLeases(store, id, releaseTask, endScope(id));
}

export async function done(store: Store, id: string, opts: { commit?: string; note?: string } = {}): Promise<Task> {
  const commit = opts.commit !== undefined ? await resolveCommit(store.cwd, opts.commit) : undefined;
  const result = { ...(commit ? { commit } : {}), ...(opts.note !== undefined ? { note: opts.note } : {}) };
  return mutateTaskWithLeases(store, id, (t, ctx) => completeTask(t, ctx, result), endScope(id));
}

export function failWith(store: Store, id: string, reason: string): Promise<Task> {
  return mutateTaskWithLeases(store, id, (t, ctx) => failTask(t, ctx, reason), endScope(id));
}

/** `opts.fence`: only the claim granted with this fence (the one the caller judged); refused if another was granted since. */
export function reclaim(store: Store, id: string, reason: string, opts: { fence?: number } = {}): Promise<Task> {
  return mutateTaskWithLeases(store, id, (t, ctx) => reclaimTask(t, ctx, reason, opts.fence), endScope(id), { exclusive: true });
}

export function cancel(store: Store, id: string, reason: string, opts: CasOptions = {}): Promise<Task> {
  return mutateTaskWithLeases(store, id, (t, ctx) => cancelTask(t, ctx, reason), endScope(id), opts);
}
