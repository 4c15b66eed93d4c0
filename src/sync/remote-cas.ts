// Exclusive writes with a sync remote: granted only once the atomic push lands. The remote is the
// referee between clones the way `update-ref` is between processes of one clone.
import { fail, HandoffError, type ErrorCode } from "../core/errors.ts";
import { updateRefs, type RefUpdate } from "../git/refs.ts";
import { pushWithLease, trackingRef } from "../git/remote.ts";
import { refreshTracking, trackingFor } from "./tracking.ts";
import { isAncestor } from "../store/history.ts";
import { integrate, type Integration } from "./integrate.ts";
import { markTentative, recordConflicts } from "./local-area.ts";
import type { Attempt, Store } from "../store/store.ts";

/** Refusals about state: before one counts, the state it was decided on must be the remote's. */
const STATE_REFUSALS = new Set<ErrorCode>(["held_by_other", "not_holder", "final_state", "not_found", "no_task_ready", "exists"]);

const REMOTE_BUDGET_MS = 60_000;
const MAX_ROUNDS = 40;


export function unreachable(remote: string, message: string): never {
  fail("remote_unreachable", `the sync remote ${remote} cannot be reached (${message}): exclusive operations need it (or use --offline for a tentative grant)`, { remote }, [
    { action: "retry", detail: "check the network or credentials, then run the command again" },
    { action: "work_elsewhere", detail: "or work offline: add --offline (the grant is tentative until the next git handoff sync)" },
  ]);
}

/** Fetches the remote's refs/handoff/* and applies them locally; conflicts go to their agents. */
export async function refresh(store: Store, remote: string): Promise<{ ok: true; integration: Integration } | { ok: false; message: string }> {
  const f = await refreshTracking(store, remote);
  if (!f.ok) return f;
  const integration = await integrate(store, f.before, f.after);
  if (integration.conflicts.length) await recordConflicts(store, integration.conflicts);
  return { ok: true, integration };
}

/**
 * The remote compare-and-swap loop. The attempt decides on local state, which normally mirrors
 * the remote; the push's lease (the remote value that state came from) makes the decision count
 * only if the remote still has it. A rejected push or a refusal re-fetches and re-decides, so an
 * answer is always about the remote's current state, never a stale local one.
 */
export async function remoteCasLoop<R>(store: Store, remote: string, attempt: Attempt<R>): Promise<R> {
  const deadline = Date.now() + REMOTE_BUDGET_MS;
  let refreshed = false;
  for (let n = 0; ; n++) {
    let out: { updates: RefUpdate[]; result: R };
    try {
      out = await attempt(store.now());
    } catch (e) {
      if (!(e instanceof HandoffError) || !STATE_REFUSALS.has(e.code) || refreshed) throw e;
      const r = await refresh(store, remote);
      if (!r.ok) {
        if (store.syncOptions.offline) throw e;
        unreachable(remote, r.message);
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

    const leases = out.updates.map((u) => ({ ref: u.ref, new: u.new, expected: tracking.get(u.ref) ?? null }));
    const push = await pushWithLease(store.cwd, remote, leases, store.actor.agent);
    if (push.kind === "unreachable") {
      if (!store.syncOptions.offline) unreachable(remote, push.message);
      const local = await updateRefs(store.cwd, out.updates, store.zeroOid, store.actor.agent);
      if (!local.ok) {
        await sleep(backoff(n));
        continue;
      }
      await markTentative(store, out.updates);
      store.notices.push(`offline: the grant is tentative until the next git handoff sync confirms or refuses it`);
      return out.result;
    }
    if ([...push.status.values()].every((s) => s === "ok")) {
      await settleLocal(store, remote, out.updates, leases);
      return out.result;
    }
    if (Date.now() >= deadline || n >= MAX_ROUNDS) break;
    const r = await refresh(store, remote);
    if (!r.ok) unreachable(remote, r.message);
    refreshed = true;
    await sleep(backoff(n));
  }
  fail("lost_race", "gave up after repeated concurrent pushes to the sync remote; try again", { remote }, [
    { action: "retry", detail: "other clones kept the same refs busy; run the command again" },
  ]);
}

/** The push landed: move the local refs and their tracking refs to what the remote now has. */
async function settleLocal(store: Store, remote: string, updates: RefUpdate[], leases: { ref: string; new: string | null; expected: string | null }[]): Promise<void> {
  const tracking: RefUpdate[] = leases.map((l) => ({ ref: trackingRef(remote, l.ref), new: l.new, old: l.expected }));
  const both = await updateRefs(store.cwd, [...updates, ...tracking], store.zeroOid, store.actor.agent);
  if (both.ok) return;
  // A concurrent fetch moved a tracking ref (harmless), or a local writer moved a ref: the next
  // sync replays that local write on top of what we pushed.
  await updateRefs(store.cwd, updates, store.zeroOid, store.actor.agent);
}

export function backoff(n: number): number {
  const cap = Math.min(400, 10 * 2 ** Math.min(n, 6));
  return cap / 2 + Math.random() * (cap / 2);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
