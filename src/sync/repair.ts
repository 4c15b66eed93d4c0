// `git handoff sync --repair`: a person overwrites the remote's quarantined refs with this clone's
// state. A repair that would lower a fence, undo a finished task or a review, remove a live claim
// or lease, or delete a ref this clone lacks is refused for that ref (repair-hazard.ts) unless
// `force`; the others go ahead. A ref whose name no git-handoff writes is deleted.
// Newer-format refs are left alone: they are not hostile, just not ours to read.
import { updateRefs } from "../git/refs.ts";
import { pushWithLease } from "../git/push-lease.ts";
import { trackingRef } from "../git/tracking-ref.ts";
import type { Store } from "../store/store.ts";
import { readQuarantine, writeQuarantine } from "./quarantine.ts";
import { fail } from "../core/errors.ts";
import { callTimeout, remoteBudget, remoteFailed } from "./remote-budget.ts";
import { forgetMovedRemote } from "./tracking-identity.ts";
import { plannedRepair } from "./repair-hazard.ts";

export interface Repair {
  ref: string;
  /** The remote's refused value, overwritten. */
  was: string;
  reason: string;
  /** This clone's value pushed in its place; null deletes the remote ref. */
  now: string | null;
  ok: boolean;
  /** Why it was not pushed: what the remote's value would lose. */
  refused: string | null;
  /** unsafe_repair when refused (the CLI's exit status comes from it). */
  code: "unsafe_repair" | null;
  /** What --force overrode to push it. */
  forced: string | null;
}

export async function repairQuarantined(store: Store, remote: string, o: { force?: boolean } = {}): Promise<Repair[]> {
  // A quarantine is of the place it was received from: a remote pointed elsewhere since has none.
  await forgetMovedRemote(store, remote);
  const q = await readQuarantine(store, remote);
  const plan: Repair[] = [];
  for (const e of q.entries.values()) {
    if (e.kind !== "invalid") continue;
    const { now, hazard } = await plannedRepair(store, e.ref, e.oid, !!e.unsent);
    plan.push({ ref: e.ref, was: e.oid, reason: e.reason, now, ok: false, refused: hazard && !o.force ? hazard : null, code: hazard && !o.force ? "unsafe_repair" : null, forced: hazard && o.force ? hazard : null });
  }
  const go = plan.filter((p) => !p.refused);
  if (!go.length) return plan;
  const budget = await remoteBudget(store, remote);
  const push = await pushWithLease(store.storeCwd, remote, go.map((p) => ({ ref: p.ref, new: p.now, expected: p.was })), callTimeout(budget), store.actor.agent);
  if (push.kind === "unsent") remoteFailed(budget, { ok: false, message: push.message, timedOut: push.timedOut }, "sync");
  if (push.kind === "unknown") {
    fail("outcome_unknown", `the repair push to ${remote} went out but no report came back (${push.message})`, { remote }, [
      { action: "retry", detail: "run git handoff sync, then git handoff doctor to see what the remote holds" },
    ]);
  }
  const entries = new Map(q.entries);
  for (const p of go) {
    p.ok = push.status.get(p.ref) === "ok";
    if (!p.ok) continue;
    entries.delete(p.ref);
    await updateRefs(store.storeCwd, [{ ref: trackingRef(remote, p.ref), new: p.now, old: p.was }], store.zeroOid);
  }
  await writeQuarantine(store, remote, entries, q.tip, `repaired ${go.filter((p) => p.ok).length} ref(s) on ${remote}`);
  return plan;
}
