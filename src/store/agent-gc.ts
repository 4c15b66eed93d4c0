// Garbage collection of agents silent past `gc_after`. One transaction per agent: its ref is
// deleted, every task it still held gets the release (or expiry) commit, and the removal is
// appended to refs/handoff/gc-log with the agent's last declaration in the tree. The log ref
// exists because a deleted ref's history is unreachable: without it `git handoff events` could not
// show that the agent was ever removed, and agents that held nothing would vanish without a trace.
import { isGcDue } from "../core/agent.ts";
import { agentGcEvent, releaseForGc } from "../core/agent-roster.ts";
import { HandoffError } from "../core/errors.ts";
import { Task } from "../core/task.ts";
import type { RefUpdate } from "../git/refs.ts";
import { AGENT_FILE, agentRef, listAgents, loadAgent } from "./agent-store.ts";
import { writeSteps } from "./codec.ts";
import { REF_ROOT, type Store } from "./store.ts";
import { TASKS_PREFIX } from "./task-store.ts";
import { dropAgentLeases } from "../core/task-leases.ts";
import { leaseUpdate, loadLeases } from "./lease-store.ts";
import { leasesFirst } from "./task-lease-store.ts";

// Not under log/: refs/handoff/log/<agent> is each agent's catch log, and an agent may be named "agents".
export const AGENT_LOG_REF = `${REF_ROOT}gc-log`;

export interface GcResult {
  agent: string;
  last_heartbeat: string;
  released: string[];
}

/** `dryRun`: what would be removed and released now, nothing written. */
export async function gcAgents(store: Store, opts: { dryRun?: boolean } = {}): Promise<GcResult[]> {
  const now = store.now();
  const { agents } = await listAgents(store);
  const due = agents.filter((a) => a.record.agent !== store.actor.agent && isGcDue(a.record, now, store.config.gcAfterMs));
  const results: GcResult[] = [];
  if (opts.dryRun) {
    const ctx = { actor: store.actor, now };
    for (const a of due) {
      const released = (await storedClaimsOf(store, a.record.agent)).filter((h) => releaseForGc(h.task, ctx, a.record).steps.length).map((h) => h.task.id);
      results.push({ agent: a.record.agent, last_heartbeat: a.record.heartbeat_at, released });
    }
    return results;
  }
  for (const candidate of due) {
    const r = await store.casLoop(async (at) => {
      const cur = await loadAgent(store, candidate.record.agent);
      if (!cur || !isGcDue(cur.record, at, store.config.gcAfterMs)) return { updates: [], result: null };
      const ctx = { actor: store.actor, now: at };
      const updates: RefUpdate[] = [{ ref: agentRef(cur.record.agent), new: null, old: cur.tip }];
      const released: string[] = [];
      for (const { name, oid, task } of await storedClaimsOf(store, cur.record.agent)) {
        const out = releaseForGc(task, ctx, cur.record);
        if (!out.steps.length) continue;
        updates.push({ ref: name, new: writeSteps(store, oid, "task.json", out.steps), old: oid });
        released.push(task.id);
      }
      // Its file leases go with it: those of the tasks it held and its free-standing ones.
      const leases = await loadLeases(store);
      const lu = leaseUpdate(store, leases.tip, dropAgentLeases(leases.set, cur.record.agent, released, await store.writeContext(at)));
      if (lu) updates.push(lu);
      const logTip = await store.readRef(AGENT_LOG_REF);
      const logNew = writeSteps(store, logTip, AGENT_FILE, [{ event: agentGcEvent(cur.record, ctx), record: cur.record }]);
      updates.push({ ref: AGENT_LOG_REF, new: logNew, old: logTip });
      // The claims end: their leases go first should the transaction stop half way (refOrder).
      return { updates: leasesFirst(updates), result: { agent: cur.record.agent, last_heartbeat: cur.record.heartbeat_at, released } };
    });
    if (r) results.push(r);
  }
  return results;
}

/** The tasks stored as claimed by `agent`, with their refs. */
async function storedClaimsOf(store: Store, agent: string): Promise<{ name: string; oid: string; task: Task }[]> {
  const out: { name: string; oid: string; task: Task }[] = [];
  for (const { name, oid } of await store.listRefs(TASKS_PREFIX)) {
    let task: Task;
    try {
      task = await store.record(name, oid, "task.json", Task);
    } catch (e) {
      if (e instanceof HandoffError) continue; // a corrupt task is reported by listings, not GC
      throw e;
    }
    if (task.status === "claimed" && task.claim?.agent === agent) out.push({ name, oid, task });
  }
  return out;
}
