// Who is around: each declared agent with its status, claims and capacity, and what GC would do.
import { classifyAgent, isGcDue, type AgentRecord, type AgentStatus, type AgentThresholds } from "./agent.ts";
import { buildLabel, type BuildIdentity } from "./build-identity.ts";
import type { Config } from "./config.ts";
import type { HandoffEvent } from "./event.ts";
import type { Step } from "./outcome.ts";
import { settle, type OpContext } from "./task-ops.ts";
import { claimGraceUntil, viewerContext, type Viewer } from "./clock-skew.ts";
import type { Task } from "./task.ts";
import { textOrder } from "./text-order.ts";
import type { ViewTask } from "./view-task.ts";
import { asViewTasks, type ViewTasks } from "./view-tasks.ts";

export interface RosterEntry {
  agent: string;
  status: AgentStatus;
  objective: string | null;
  worktree: string | null;
  branch: string | null;
  scope: AgentRecord["scope"];
  session: string | null;
  files: string[];
  awaits: string | null;
  heartbeat_at: string;
  heartbeat_age_ms: number;
  started_at: string;
  ended_at: string | null;
  /** Tasks it holds a live claim on. */
  claimed: string[];
  capacity: { claimed: number; max: number };
  /** Silent past `gc_after`: the next `git handoff gc` removes it and releases its claims. */
  gc_due: boolean;
  /** The git-handoff build that last wrote its declaration; null: a build from before builds were recorded. */
  build: BuildIdentity | null;
}

export interface Roster {
  agents: RosterEntry[];
  /** Agents holding live claims without ever declaring a session. */
  undeclared_holders: { agent: string; claimed: string[] }[];
}

type RosterConfig = Pick<Config, "staleAfterMs" | "disconnectedAfterMs" | "gcAfterMs" | "maxConcurrent">;

/**
 * `viewer`: whose view it is; another agent's claim inside its takeover grace counts as held, as a
 * claim of the task is refused until the grace ends (clock-skew.ts Viewer).
 */
export function buildRoster(agents: AgentRecord[], tasks: readonly ViewTask[] | ViewTasks, now: Date, cfg: RosterConfig, viewer?: Viewer): Roster {
  const v = asViewTasks(tasks);
  const held = new Map<string, string[]>();
  // Another agent's claim inside the viewer's grace is held too (claimGraceUntil).
  const graced = viewer?.graceMs ? viewerContext(now, viewer) : null;
  const nowMs = now.getTime();
  for (let i = 0; i < v.length; i++) {
    // isLive, with the expiry parsed once per view (ViewTasks.expires); a claim that ran out is read whole only for the grace.
    const live = v.expires[i]! > nowMs;
    if (!live && !(graced && v.status[i] === "claimed" && v.holder[i] !== undefined && claimGraceUntil(v.record(i), graced))) continue;
    const agent = v.holder[i]!;
    const list = held.get(agent);
    if (list) list.push(v.ids[i]!);
    else held.set(agent, [v.ids[i]!]);
  }
  const entries = agents.map((a): RosterEntry => {
    const claimed = held.get(a.agent) ?? [];
    return {
      agent: a.agent,
      status: classifyAgent(a, now, cfg),
      objective: a.objective,
      worktree: a.worktree,
      branch: a.branch,
      scope: a.scope,
      session: a.session,
      files: a.files,
      awaits: a.awaits,
      heartbeat_at: a.heartbeat_at,
      heartbeat_age_ms: now.getTime() - Date.parse(a.heartbeat_at),
      started_at: a.started_at,
      ended_at: a.ended_at,
      claimed,
      capacity: { claimed: claimed.length, max: a.capacity ?? cfg.maxConcurrent },
      gc_due: isGcDue(a, now, cfg.gcAfterMs),
      build: a.build ?? null,
    };
  });
  const declared = new Set(agents.map((a) => a.agent));
  const undeclared = [...held.entries()]
    .filter(([agent]) => !declared.has(agent))
    .sort(([a], [b]) => textOrder(a, b))
    .map(([agent, claimed]) => ({ agent, claimed }));
  return { agents: entries, undeclared_holders: undeclared };
}

/**
 * The roster narrowed to agents in one state (`agents --status`, MCP `list_agents`). Holders that
 * never declared a session have no heartbeat, so no state: they are listed only unfiltered.
 */
export function rosterInState(roster: Roster, status: AgentStatus | undefined): Roster {
  return status ? { agents: roster.agents.filter((a) => a.status === status), undeclared_holders: [] } : roster;
}

/**
 * What GC does to one task of a removed agent: lazy expiry first (its lease most likely ran out
 * long ago), then, if it still holds a live claim, a release recorded as `agent_gc`.
 */
export function releaseForGc(task: Task, ctx: OpContext, gone: AgentRecord): { record: Task; steps: Step<Task>[] } {
  const settled = settle(task, ctx);
  const t = settled.record;
  if (t.status !== "claimed" || t.claim?.agent !== gone.agent) return settled;
  const at = ctx.now.toISOString();
  const record: Task = { ...t, status: "todo", claim: null, updated_at: at };
  const event: HandoffEvent = {
    type: "agent_gc",
    task: t.id,
    agent: gone.agent,
    by: ctx.actor.agent,
    holder: gone.agent,
    at,
    scope: t.claim.scope,
    worktree: t.claim.worktree,
    branch: t.claim.branch,
    fence: t.claim.fence,
    last_heartbeat: gone.heartbeat_at,
  };
  return { record, steps: [...settled.steps, { event, record }] };
}

/** The event that records an agent's removal (on refs/handoff/gc-log, with its last record). */
export function agentGcEvent(gone: AgentRecord, ctx: OpContext): HandoffEvent {
  return {
    type: "agent_gc",
    task: "",
    agent: gone.agent,
    by: ctx.actor.agent,
    at: ctx.now.toISOString(),
    scope: gone.scope,
    worktree: gone.worktree,
    branch: gone.branch,
    last_heartbeat: gone.heartbeat_at,
    session: gone.session,
  };
}

export interface BuildInUse {
  /** null: declarations written by builds from before the build was recorded. */
  build: BuildIdentity | null;
  agents: string[];
}

/**
 * The builds of git-handoff the agents with a session that is not disconnected (active or stale)
 * run, by their declarations, the most used first. More than one is worth a look: an older build
 * holds back what a newer one writes.
 */
export function buildsInUse(agents: AgentRecord[], now: Date, t: AgentThresholds): BuildInUse[] {
  const groups = new Map<string, BuildInUse>();
  for (const a of agents) {
    if (classifyAgent(a, now, t) === "disconnected") continue;
    const key = a.build ? buildLabel(a.build) : "";
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { build: a.build ?? null, agents: [] }));
    group.agents.push(a.agent);
  }
  return [...groups.values()].sort((x, y) => y.agents.length - x.agents.length || textOrder(x.build ? buildLabel(x.build) : "", y.build ? buildLabel(y.build) : ""));
}
