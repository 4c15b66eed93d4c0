// Agents at refs/handoff/agents/<agent>: each agent writes only its own ref. Heartbeats do not grow
// the history: a heartbeat that follows a heartbeat replaces it (same parent), so `git log` of an
// agent reads as its sessions, with at most one heartbeat after each.
import { sameBuild, THIS_BUILD } from "../core/build-identity.ts";
import { AgentRecord, beat, endSession, heartbeatDue, startSession, type SessionInput } from "../core/agent.ts";
import { fail, HandoffError } from "../core/errors.ts";
import { validateAgentId } from "../core/ids.ts";
import type { Outcome } from "../core/outcome.ts";
import type { OpContext } from "../core/task-ops.ts";
import { eventFromMessage, readRecord, writeSteps } from "./codec.ts";
import { REF_ROOT, type CasOptions, type Store } from "./store.ts";
import { extendAllDue } from "./claim-extend.ts";
import { localMachine } from "./machine.ts";
import { recordWorktreeDrift, type WorktreeDrift } from "./drift.ts";
import { textOrder } from "../core/text-order.ts";

export const AGENTS_PREFIX = `${REF_ROOT}agents/`;
export const AGENT_FILE = "agent.json";

export function agentRef(agent: string): string {
  return AGENTS_PREFIX + validateAgentId(agent);
}

export interface StoredAgent {
  record: AgentRecord;
  tip: string;
  /** The first parent of the tip, and whether the tip is a heartbeat (to squash the next one). */
  parent: string | null;
  tipIsHeartbeat: boolean;
}

async function readAgentAt(store: Store, ref: string, tip: string): Promise<StoredAgent> {
  // Keyed by ref and tip: the same commit under another agent's ref must still be refused there.
  return store.kept(`agent:${ref}:${tip}`, async () => {
    const { record, commit } = await readRecord(store.reader, store.oidBytes, tip, ref, AGENT_FILE, AgentRecord);
    return { record, tip, parent: commit.parents[0] ?? null, tipIsHeartbeat: eventFromMessage(commit.message)?.type === "heartbeat" };
  });
}

export async function loadAgent(store: Store, agent: string): Promise<StoredAgent | null> {
  const ref = agentRef(agent);
  const tip = await store.readRef(ref);
  return tip ? readAgentAt(store, ref, tip) : null;
}

export async function requireAgent(store: Store, agent: string): Promise<StoredAgent> {
  const found = await loadAgent(store, agent);
  if (!found) {
    fail("not_found", `no agent ${agent}`, { agent }, [{ action: "fix_input", detail: "list agents: git handoff agents" }]);
  }
  return found;
}

export async function listAgents(store: Store): Promise<{ agents: StoredAgent[]; problems: string[] }> {
  const agents: StoredAgent[] = [];
  const problems: string[] = [];
  for (const { name, oid } of await store.listRefs(AGENTS_PREFIX)) {
    try {
      agents.push(await readAgentAt(store, name, oid));
    } catch (e) {
      if (!(e instanceof HandoffError)) throw e;
      problems.push(e.message);
    }
  }
  agents.sort((a, b) => textOrder(a.record.agent, b.record.agent));
  return { agents, problems };
}

/** Runs a pure agent operation on the caller's own ref under compare-and-swap. */
export async function mutateOwnAgent(store: Store, op: (prev: AgentRecord | null, ctx: OpContext) => Outcome<AgentRecord>, opts: CasOptions = {}): Promise<AgentRecord> {
  const ref = agentRef(store.actor.agent);
  const machine = await localMachine(store);
  return store.casLoop(async (now) => {
    const prev = await loadAgent(store, store.actor.agent);
    const decided = op(prev?.record ?? null, { actor: store.actor, now });
    if (!decided.ok) throw new HandoffError(decided.refusal);
    // Every declaration says which machine the agent is on (what addressed tasks match), and which
    // build of git-handoff wrote it (what `agents` and doctor show).
    const stamp = (r: AgentRecord): AgentRecord => (r.machine === machine && r.build && sameBuild(r.build, THIS_BUILD) ? r : { ...r, machine, build: THIS_BUILD });
    const out = { ...decided, record: stamp(decided.record), steps: decided.steps.map((s) => ({ ...s, record: stamp(s.record) })) };
    if (out.steps.length === 0) return { updates: [], result: out.record };
    const squash = prev !== null && prev.tipIsHeartbeat && out.steps.length === 1 && out.steps[0]!.event.type === "heartbeat";
    const parent = squash ? prev!.parent : (prev?.tip ?? null);
    const tip = writeSteps(store, parent, AGENT_FILE, out.steps);
    return { updates: [{ ref, new: tip, old: prev?.tip ?? null }], result: out.record };
  }, opts);
}

/** The planned files are read against this worktree's root, as task scopes are (startSession). */
export function startSessionFor(store: Store, input: SessionInput): Promise<AgentRecord> {
  return mutateOwnAgent(store, (prev, ctx) => startSession(prev, { ...input, root: store.repo.workTree }, ctx));
}

export function endSessionFor(store: Store): Promise<AgentRecord> {
  return mutateOwnAgent(store, endSession);
}

/**
 * A heartbeat also extends the caller's claims that are a third through their time (claim-extend.ts),
 * and records the caller's undeclared changes in its worktree (drift.ts): `drift` says what it
 * recorded and how many changed paths it could not judge (nothing when that failed: best effort).
 */
export async function heartbeatWithDrift(store: Store, opts: { session?: string } = {}): Promise<{ record: AgentRecord; drift: WorktreeDrift }> {
  const record = await mutateOwnAgent(store, (prev, ctx) => beat(prev, ctx, opts.session));
  await extendAllDue(store);
  const drift = await recordWorktreeDrift(store, record).catch(() => ({ recorded: [], unjudged: 0 }));
  return { record, drift };
}

export async function heartbeatFor(store: Store, opts: { session?: string } = {}): Promise<AgentRecord> {
  return (await heartbeatWithDrift(store, opts)).record;
}

/**
 * The implicit heartbeat every command of an agent gives: it writes only for an open session and
 * only when the stored heartbeat is older than `heartbeat_interval`, so a hook that runs on every
 * edit costs a file read, not a commit. Best effort: a lost race means someone (this agent, in
 * another process) just wrote, which is as good.
 */
export async function refreshHeartbeat(store: Store): Promise<boolean> {
  try {
    const prev = await loadAgent(store, store.actor.agent);
    if (!heartbeatDue(prev?.record ?? null, store.now(), store.config.heartbeatIntervalMs)) return false;
    // A heartbeat need not go out at once: under the push budget it rides with the next push.
    await mutateOwnAgent(store, (p, ctx) => (heartbeatDue(p, ctx.now, store.config.heartbeatIntervalMs) ? beat(p, ctx) : { ok: true, record: p!, steps: [] }), { deferrable: true });
    await extendAllDue(store);
    return true;
  } catch {
    return false;
  }
}
