// Exclusive writes with a sync remote: granted only once the atomic push lands. The remote is the
// referee between clones the way `update-ref` is between processes of one clone.
import { trace } from "./trace.ts";
import { fail, HandoffError, type ErrorCode } from "../core/errors.ts";
import type { RefUpdate } from "../git/refs.ts";
import { pushWithLease, sendAgain, type PushResult, type PushUpdate } from "../git/push-lease.ts";
import { trackingRef } from "../git/tracking-ref.ts";
import type { RemoteFailure } from "../git/remote-failure.ts";
import { carriesEdges, refuseCycles } from "./dependency-cycles.ts";
import { callTimeout, remoteBudget, remoteFailed, timedOut, unreachable, type RemoteBudget } from "./remote-budget.ts";
import { pendingLeases, settleCarried } from "./pending-push.ts";
import { pushEffect } from "./push-outcome.ts";
import { refreshTracking } from "./refresh-tracking.ts";
import { trackingFor } from "./tracking.ts";
import { isAncestor } from "../store/history.ts";
import { integrate, type Integration } from "./integrate.ts";
import { markTentative, recordConflicts } from "./local-area.ts";
import type { Attempt, CasOptions, Store } from "../store/store.ts";
import { sharedBudget } from "./claim-deadline.ts";
import { guardClock } from "./skew.ts";
import { forgetMovedRemote } from "./tracking-identity.ts";
import { refuseNameClash } from "./name-clash.ts";

/** Refusals about state: before one counts, the state it was decided on must be the remote's. */
const STATE_REFUSALS = new Set<ErrorCode>(["held_by_other", "not_holder", "final_state", "not_found", "no_task_ready", "exists"]);

const MAX_ROUNDS = 40;

export { unreachable } from "./remote-budget.ts";

/** Fetches the remote's refs/handoff/* and applies them locally; conflicts go to their agents. */
export async function refresh(store: Store, remote: string, budget?: RemoteBudget): Promise<{ ok: true; integration: Integration; refused: string[] } | RemoteFailure> {
  const r = await fetchAndIntegrate(store, remote, budget);
  if (!r.ok) return r;
  if (r.integration.conflicts.length) await recordConflicts(store, r.integration.conflicts);
  return { ok: true, integration: r.integration, refused: r.fetched.refused.map((q) => q.ref) };
}

/** The remote's refs fetched into tracking and applied here (their conflicts are the caller's to record). */
async function fetchAndIntegrate(store: Store, remote: string, budget?: RemoteBudget) {
  await forgetMovedRemote(store, remote);
  const fetched = await refreshTracking(store, remote, undefined, budget);
  if (!fetched.ok) return fetched;
  return { ok: true as const, fetched, integration: await integrate(store, fetched.before, fetched.after) };
}

/**
 * `refresh`, and then the dependencies made here and not pushed yet laid on the remote's graph as
 * sync lays them (dependency-cycles.ts): one that would close a cycle is dropped here, a conflict
 * for its agent. `moved`: a local ref changed (applied, or an edge dropped): decide again.
 * `checks`: leases on every task the accepted edges reach.
 */
async function meetRemoteGraph(store: Store, remote: string, budget: RemoteBudget): Promise<{ ok: true; moved: boolean; checks: PushUpdate[] } | RemoteFailure> {
  const r = await fetchAndIntegrate(store, remote, budget);
  if (!r.ok) return r;
  const step = r.integration;
  const cycles = await refuseCycles(store, step.ahead, r.fetched.after);
  const conflicts = [...step.conflicts, ...cycles.conflicts];
  if (conflicts.length) await recordConflicts(store, conflicts);
  const kept = new Map(cycles.ahead.map((a) => [a.ref, a.local]));
  const dropped = step.ahead.some((a) => kept.get(a.ref) !== a.local);
  return { ok: true, moved: dropped || step.fastForwarded.length + step.replayed.length + step.removed.length > 0, checks: cycles.checks };
}

/**
 * The remote compare-and-swap loop. The attempt decides on local state, which normally mirrors
 * the remote; the push's lease (the remote value that state came from) makes the decision count
 * only if the remote still has it. A rejected push or a refusal re-fetches and re-decides, so an
 * answer is always about the remote's current state, never a stale local one. Every remote call
 * is bounded, and so is the whole loop (remote-budget.ts).
 */
export async function remoteCasLoop<R>(store: Store, remote: string, attempt: Attempt<R>, opts: CasOptions = {}): Promise<R> {
  trace("cas: start");
  await forgetMovedRemote(store, remote);
  const budget = sharedBudget(await remoteBudget(store, remote), opts.deadline);
  // A write that is not exclusive comes here only under --push: its failure says so.
  const use = opts.exclusive ? "exclusive" : "push";
  // A takeover must not count on a clock that is off; a creation takes nothing over.
  if (opts.exclusive && !opts.createsOnly) await guardClock(store, remote, callTimeout(budget));
  let refreshed = false;
  let carry = true;
  let sentAgain = false;
  for (let n = 0; ; n++) {
    let out: { updates: RefUpdate[]; result: R };
    try {
      out = await attempt(store.now());
    } catch (e) {
      if (!(e instanceof HandoffError) || !STATE_REFUSALS.has(e.code) || refreshed) throw e;
      const r = await refresh(store, remote, budget);
      if (!r.ok) {
        if (store.syncOptions.offline) throw e;
        remoteFailed(budget, r, use);
      }
      refreshed = true;
      continue;
    }
    if (out.updates.length === 0) return out.result;

    const tracking = await trackingFor(store, remote, out.updates.map((u) => u.ref));
    let behind = false;
    for (const u of out.updates) {
      const t = tracking.get(u.ref) ?? null;
      if (t !== null && t !== u.old && !(u.old !== null && (await isAncestor(store, t, u.old, u.ref)))) behind = true;
    }
    if (behind) {
      if (n >= MAX_ROUNDS) break;
      // Fetched earlier but not applied (another process fetched): apply, then decide again.
      await integrate(store, tracking, tracking);
      continue;
    }

    // The push sends the local commits of every ref it writes, not only this write's: dependencies
    // made here among them have not met the remote's graph, which only sync lays them on. They
    // meet it first, the same way; the push then leases every task they reach.
    let reach: PushUpdate[] = [];
    if (await carriesEdges(store, out.updates.map((u) => ({ ref: u.ref, local: u.old, expected: tracking.get(u.ref) ?? null })))) {
      const met = await meetRemoteGraph(store, remote, budget);
      if (!met.ok) {
        // Offline, the write is granted tentatively below, and the next sync lays them on it.
        if (!store.syncOptions.offline) remoteFailed(budget, met, use);
      } else if (met.moved) {
        if (n >= MAX_ROUNDS) break;
        continue;
      } else reach = met.checks;
    }

    const own = out.updates.map((u) => ({ ref: u.ref, new: u.new, expected: tracking.get(u.ref) ?? null }));
    // Writes queued under the push budget ride along in the same atomic push (pending-push.ts).
    const carried = carry ? await pendingLeases(store, remote, own.map((l) => l.ref)) : [];
    const leases = [...own, ...carried, ...reach.filter((c) => !own.some((l) => l.ref === c.ref) && !carried.some((l) => l.ref === c.ref))];
    trace("cas: pushing");
    const push = await pushWithLease(store.storeCwd, remote, leases, callTimeout(budget), store.actor.agent, store.remoteSource);
    trace("cas: pushed");
    const unknown = push.kind === "unknown" || (push.kind === "done" && [...push.status.values()].includes("unknown"));
    if (push.kind === "unsent" || unknown) {
      const why = push.kind === "done" ? "the remote did not report the result" : push.message;
      const offline = store.syncOptions.offline;
      // Offline, an outcome that stays unknown is as good as unsent: sync settles the tentative grant.
      const effect = unknown ? await pushEffect(store, budget, leases, why).catch((e) => (offline ? ("not_landed" as const) : Promise.reject(e))) : "not_landed";
      if (effect === "landed") {
        store.notices.push(`the push's report from ${remote} was lost (${why}); reading the remote back shows it landed`);
        await settleLocal(store, remote, out.updates, own);
        await settleCarried(store, remote, carried);
        return out.result;
      }
      // Dropped on a kept connection and read back as not landed: the round goes again, once.
      if (effect === "not_landed" && sendAgain(push, sentAgain) && n < MAX_ROUNDS) {
        sentAgain = true;
        continue;
      }
      if (!offline) {
        if (push.kind !== "done" && push.timedOut) timedOut(budget, unknown ? "the push was stopped and did not land" : push.message);
        unreachable(remote, unknown ? `${why}; the push did not land` : why, use);
      }
      const r = await grantTentatively(store, out.updates, out.result, n);
      if (r === RETRY) continue;
      return r;
    }
    if ([...push.status.values()].every((s) => s === "ok")) {
      await settleLocal(store, remote, out.updates, own);
      await settleCarried(store, remote, carried);
      trace("cas: settled");
      return out.result;
    }
    refusedByRemote(remote, own, push);
    // Whatever failed, the grant must not depend on the queued writes: try again without them.
    if (carried.length) carry = false;
    if (Date.now() >= budget.until || n >= MAX_ROUNDS) break;
    const r = await refresh(store, remote, budget);
    if (!r.ok) remoteFailed(budget, r, use);
    // A ref the remote holds under a name no git-handoff writes makes git refuse this push every
    // time (a queued write it blocks is only left behind, as above).
    refuseNameClash(remote, leases.filter((l) => !carried.includes(l)).map((l) => l.ref), r.refused);
    refreshed = true;
    await sleep(backoff(n));
  }
  fail("lost_race", "gave up after repeated concurrent pushes to the sync remote; try again", { remote }, [
    { action: "retry", detail: "other clones kept the same refs busy; run the command again" },
  ]);
}

const RETRY = Symbol("retry");

/** Offline: the write is applied here and marked tentative until the next sync settles it. */
async function grantTentatively<R>(store: Store, updates: RefUpdate[], result: R, n: number): Promise<R | typeof RETRY> {
  const local = await store.updateRefs(updates);
  if (!local.ok) {
    await sleep(backoff(n));
    return RETRY;
  }
  await markTentative(store, updates);
  store.notices.push(`offline: the grant is tentative until the next git handoff sync confirms or refuses it`);
  return result;
}

/**
 * A ref the remote refused for a reason of its own (a hook, a protected ref, permissions): a
 * permanent refusal, in the remote's own words. Retrying would get the same answer.
 */
export function refusedByRemote(remote: string, leases: PushUpdate[], push: Extract<PushResult, { kind: "done" }>): void {
  const refused = leases.filter((l) => push.status.get(l.ref) === "rejected");
  if (!refused.length) return;
  const reason = push.reasons.get(refused[0]!.ref) ?? "rejected";
  const said = push.remoteMessage ? `: ${push.remoteMessage}` : "";
  fail(
    "remote_rejected",
    `the sync remote ${remote} refused the push of ${refused.map((l) => l.ref).join(", ")} (${reason})${said}`,
    { remote, refs: refused.map((l) => l.ref), reason, remote_message: push.remoteMessage },
    [
      { action: "fix_input", detail: "the remote's hooks or permissions refuse refs/handoff/*: ask its admin, or choose another sync remote with git handoff remote <name>" },
      { action: "work_elsewhere", detail: "or keep coordination in this clone: git handoff remote --none" },
    ],
  );
}

/** The push landed: move the local refs and their tracking refs to what the remote now has. */
async function settleLocal(store: Store, remote: string, updates: RefUpdate[], leases: { ref: string; new: string | null; expected: string | null }[]): Promise<void> {
  const tracking: RefUpdate[] = leases.map((l) => ({ ref: trackingRef(remote, l.ref), new: l.new, old: l.expected }));
  const both = await store.updateRefs([...updates, ...tracking]);
  if (both.ok) return;
  // A concurrent fetch moved a tracking ref (harmless), or a local writer moved a ref: the next
  // sync replays that local write on top of what we pushed.
  await store.updateRefs(updates);
}

export function backoff(n: number): number {
  const cap = Math.min(400, 10 * 2 ** Math.min(n, 6));
  return cap / 2 + Math.random() * (cap / 2);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
