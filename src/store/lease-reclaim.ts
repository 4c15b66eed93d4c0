// Force-release of file leases that have outlived their reason (lease-flags.ts), shared by the CLI
// (`unlease --reclaim`) and the dashboard. The facts (tasks, agents) are read fresh in every
// compare-and-swap attempt, so the decision is always about the current state.
import { buildRoster } from "../core/agent-roster.ts";
import { flagLease, type AgentLike, type LeaseFlag } from "../core/lease-flags.ts";
import { graceUntil, isLeaseLiveFor, type Lease } from "../core/lease.ts";
import { reclaimLeases, type LeaseFacts } from "../core/lease-reclaim.ts";
import { listAgents } from "./agent-store.ts";
import { viewGraceMs } from "./check-context.ts";
import { leaseUpdate, loadLeases } from "./lease-store.ts";
import type { Store } from "./store.ts";
import { listTasks } from "./task-store.ts";

export async function leaseFacts(store: Store): Promise<LeaseFacts> {
  const [{ tasks }, { agents }] = await Promise.all([listTasks(store), listAgents(store)]);
  const roster = buildRoster(agents.map((a) => a.record), tasks, store.now(), store.config);
  return {
    tasks: new Map(tasks.map((t) => [t.id, t])),
    agents: new Map<string, AgentLike>(roster.agents.map((a) => [a.agent, { status: a.status, ended_at: a.ended_at }])),
  };
}

/**
 * Live leases with the reason each may be force-released, or null; another agent's lease expired
 * by this clock that stands for the takeover grace among them, with `grace_until` (a write of its
 * path is refused until then: check-context.ts viewGraceMs).
 */
export async function flaggedLeases(store: Store, facts?: LeaseFacts): Promise<{ lease: Lease; flag: LeaseFlag | null; grace_until?: string }[]> {
  const f = facts ?? (await leaseFacts(store));
  const now = store.now();
  const me = store.actor.agent;
  const [{ set }, grace] = await Promise.all([loadLeases(store), viewGraceMs(store)]);
  return set.leases
    .filter((l) => isLeaseLiveFor(l, now, me, grace))
    .map((lease) => {
      const until = graceUntil(lease, now, me, grace);
      return { lease, flag: flagLease(lease, f), ...(until ? { grace_until: until } : {}) };
    });
}

/** Releases other agents' flagged leases on `patterns` (as leased), logged as `lease_reclaimed`. */
export async function reclaimLeasesFor(store: Store, patterns: string[], opts: { reason: string; holder?: string }): Promise<{ released: Lease[] }> {
  return store.casLoop(
    async (now) => {
      const facts = await leaseFacts(store);
      const { set, tip } = await loadLeases(store);
      const out = reclaimLeases(set, { patterns, reason: opts.reason, ...(opts.holder !== undefined ? { holder: opts.holder } : {}) }, facts, await store.writeContext(now));
      const update = leaseUpdate(store, tip, out);
      const kept = out.ok ? new Set(out.record.leases) : new Set(set.leases);
      return { updates: update ? [update] : [], result: { released: set.leases.filter((l) => !kept.has(l)) } };
    },
    // Taking a lease away from another agent counts once the sync remote has it, like a task reclaim.
    { exclusive: true },
  );
}
