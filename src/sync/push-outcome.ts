// A push whose report never came back (connection killed, deadline after the pack was sent) may
// or may not have landed. It is settled by effect: read exactly the pushed refs from the remote.
import { fail } from "../core/errors.ts";
import { lsRemoteHandoff } from "../git/remote-listing.ts";
import type { PushUpdate } from "../git/push-lease.ts";
import { VERIFY_MAX_MS, type RemoteBudget } from "./remote-budget.ts";
import type { Store } from "../store/store.ts";

export type Effect = "landed" | "not_landed";

/**
 * An atomic push lands whole or not at all: every ref at its new value is "landed", every ref
 * still without it is "not landed". A failed read, or a mix (another clone wrote since), throws
 * `outcome_unknown`: never a guess either way.
 */
export async function pushEffect(store: Store, b: RemoteBudget, leases: PushUpdate[], why: string): Promise<Effect> {
  const refs = leases.map((l) => l.ref);
  // Past the budget it still gets a few seconds, unless the caller's bound is firm.
  const left = b.until - Date.now();
  const timeout = Math.min(b.timeoutMs, Math.max(b.firm ? left : VERIFY_MAX_MS / 2, left), VERIFY_MAX_MS);
  const ls = timeout > 0 ? await lsRemoteHandoff(store.storeCwd, b.remote, timeout, refs, store.remoteSource) : { ok: false as const, message: "no time was left for it" };
  if (ls.ok) {
    const landed = leases.filter((l) => (ls.tips.get(l.ref) ?? null) === l.new).length;
    if (landed === leases.length) return "landed";
    if (landed === 0) return "not_landed";
  }
  // The tasks it was about, by name: a task created by that push (a handover's) is known by nothing else.
  const tasks = [...new Set(refs.map((r) => /\/tasks\/([^/]+)$/.exec(r)?.[1]).filter((t): t is string => !!t))];
  const about = tasks.length ? ` for task${tasks.length === 1 ? "" : "s"} ${tasks.join(", ")}` : "";
  fail(
    "outcome_unknown",
    `a push to ${b.remote}${about} may or may not have landed (${why}; ${ls.ok ? "the remote's refs changed since" : `reading it back failed: ${ls.message}`})`,
    { remote: b.remote, refs, tasks },
    [{ action: "retry", detail: `find out what holds: git handoff sync, then ${tasks.length ? tasks.map((t) => `git handoff task show ${t}`).join("; ") : "git handoff status"}` }],
  );
}
