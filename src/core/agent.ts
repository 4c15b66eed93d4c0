// Agents and their sessions. Pure: the declaration an agent writes on its own ref, how old its
// heartbeat is, and when it is silent long enough to be garbage-collected.
import * as z from "zod/mini";
import type { HandoffEvent } from "./event.ts";
import { AgentScope } from "./identity.ts";
import { HandoffError } from "./errors.ts";
import { refuse, type Outcome } from "./outcome.ts";
import { normalizeRepoPath } from "./paths.ts";
import { boundedText, isoTime, lazySchema } from "./schema-helpers.ts";
import type { OpContext } from "./task-ops.ts";
import { MAX_NOTE, MAX_OBJECTIVE } from "./task.ts";

export const MAX_PLANNED_FILES = 100;
export const MAX_GLOB = 500;
export const MAX_SESSION_ID = 200;
export const MAX_BUILD_TEXT = 64;

/** An agent's declaration at refs/handoff/agents/<agent>, written by that agent only (and by GC). */
export const AgentRecord = lazySchema(() =>
  z.object({
    agent: z.string(),
    objective: z.nullable(boundedText(MAX_OBJECTIVE)),
    worktree: z.nullable(z.string()),
    branch: z.nullable(z.string()),
    scope: AgentScope,
    /** Globs of the files it plans to change. */
    files: z.array(boundedText(MAX_GLOB)),
    /** The outcome it waits for, and from whom (free text). */
    awaits: z.nullable(boundedText(MAX_NOTE)),
    /** The agent runtime's session id (e.g. Claude Code's), when known. */
    session: z.nullable(boundedText(MAX_SESSION_ID)),
    heartbeat_at: isoTime(),
    started_at: isoTime(),
    ended_at: z.nullable(isoTime()),
    /** The machine its clone declares (git config handoff.machine): what `--to @MACHINE` matches. */
    machine: z.optional(z.string()),
    /** How many tasks it means to hold at once (session start --capacity, a worker's --concurrency). */
    capacity: z.optional(z.int().check(z.gte(1), z.lte(1000))),
    /**
     * The git-handoff build that wrote the declaration (core/build-identity.ts). Optional: records
     * of builds before it have none, and older builds, whose schemas drop fields they do not know,
     * read the records that carry it.
     */
    build: z.optional(z.object({ version: boundedText(MAX_BUILD_TEXT), commit: z.nullable(boundedText(MAX_BUILD_TEXT)), dirty: z.boolean() })),
  }),
);
export type AgentRecord = z.infer<typeof AgentRecord>;

export const AgentStatus = lazySchema(() => z.enum(["active", "stale", "disconnected"]));
export type AgentStatus = z.infer<typeof AgentStatus>;

export interface AgentThresholds {
  staleAfterMs: number;
  disconnectedAfterMs: number;
}

/** Active, stale or disconnected by heartbeat age; an ended session counts as disconnected. */
export function classifyAgent(a: AgentRecord, now: Date, t: AgentThresholds): AgentStatus {
  if (a.ended_at) return "disconnected";
  const age = now.getTime() - Date.parse(a.heartbeat_at);
  if (age <= t.staleAfterMs) return "active";
  if (age <= t.disconnectedAfterMs) return "stale";
  return "disconnected";
}

/**
 * When a declaration was made, in ms: every write of an agent's record (session start and end,
 * heartbeat) stamps heartbeat_at with its own time, so of two versions the later one is the state.
 */
export function declaredAt(a: AgentRecord): number {
  return Date.parse(a.heartbeat_at);
}

export function isGcDue(a: AgentRecord, now: Date, gcAfterMs: number): boolean {
  return now.getTime() - Date.parse(a.heartbeat_at) > gcAfterMs;
}

/** Whether a command's implicit heartbeat should write: only for an open session, and throttled. */
export function heartbeatDue(a: AgentRecord | null, now: Date, intervalMs: number): boolean {
  if (!a || a.ended_at) return false;
  return now.getTime() - Date.parse(a.heartbeat_at) >= intervalMs;
}

function agentEvent(type: HandoffEvent["type"], ctx: OpContext, extra: Partial<HandoffEvent> = {}): HandoffEvent {
  const { agent, scope, worktree, branch } = ctx.actor;
  return { type, task: "", agent, at: ctx.now.toISOString(), scope, worktree, branch, ...extra };
}

export interface SessionInput {
  objective: string;
  files: string[];
  awaits: string | null;
  session: string | null;
  capacity?: number;
  /** The worktree root the planned files are read against, as task scopes are; absent: kept as given. */
  root?: string | null;
}

export function startSession(prev: AgentRecord | null, input: SessionInput, ctx: OpContext): Outcome<AgentRecord> {
  const objective = input.objective.trim();
  if (!objective) return refuse({ code: "invalid_input", message: "session start needs --objective TEXT" });
  if (objective.length > MAX_OBJECTIVE) return refuse({ code: "invalid_input", message: `objective is ${objective.length} characters; at most ${MAX_OBJECTIVE}` });
  if (input.files.length > MAX_PLANNED_FILES) return refuse({ code: "invalid_input", message: `${input.files.length} --files globs; at most ${MAX_PLANNED_FILES}` });
  const longGlob = input.files.find((g) => g.length > MAX_GLOB || g.length === 0);
  if (longGlob !== undefined) return refuse({ code: "invalid_input", message: `--files glob must be 1 to ${MAX_GLOB} characters` });
  const oddGlob = input.files.find((g) => /[\x00-\x1f\x7f]/.test(g));
  if (oddGlob !== undefined) return refuse({ code: "invalid_input", message: `--files glob ${JSON.stringify(oddGlob.slice(0, 80))} contains control characters` });
  let files = input.files;
  try {
    // Refused outside the repository or under .git, `./src/x` stored as `src/x`.
    if (input.root) files = input.files.map((g) => normalizeRepoPath(g, input.root!, input.root!));
  } catch (e) {
    if (e instanceof HandoffError) return refuse(e.refusal);
    throw e;
  }
  if (input.awaits && input.awaits.length > MAX_NOTE) return refuse({ code: "invalid_input", message: `--awaits is ${input.awaits.length} characters; at most ${MAX_NOTE}` });
  if (input.session && (input.session.length > MAX_SESSION_ID || /[\x00-\x1f]/.test(input.session))) {
    return refuse({ code: "invalid_input", message: `--session must be at most ${MAX_SESSION_ID} printable characters` });
  }
  const at = ctx.now.toISOString();
  const { agent, worktree, branch, scope } = ctx.actor;
  const record: AgentRecord = {
    agent,
    objective,
    worktree,
    branch,
    scope,
    files,
    awaits: input.awaits,
    session: input.session ?? prev?.session ?? null,
    heartbeat_at: at,
    started_at: at,
    ended_at: null,
    ...(input.capacity !== undefined ? { capacity: input.capacity } : {}),
  };
  return { ok: true, record, steps: [{ event: agentEvent("session_started", ctx, { objective, session: record.session }), record }] };
}

export function endSession(prev: AgentRecord | null, ctx: OpContext): Outcome<AgentRecord> {
  if (!prev) return refuse(noSession(ctx.actor.agent));
  if (prev.ended_at) return { ok: true, record: prev, steps: [] };
  const at = ctx.now.toISOString();
  const record = { ...prev, heartbeat_at: at, ended_at: at };
  return { ok: true, record, steps: [{ event: agentEvent("session_ended", ctx, { session: prev.session }), record }] };
}

/**
 * An explicit heartbeat: declares the agent if it never started a session, reopens an ended one.
 * `session` (an MCP client's or hook's session id) replaces the stored one when given.
 */
export function beat(prev: AgentRecord | null, ctx: OpContext, session?: string): Outcome<AgentRecord> {
  if (session !== undefined && (session.length > MAX_SESSION_ID || /[\x00-\x1f]/.test(session))) {
    return refuse({ code: "invalid_input", message: `session id must be at most ${MAX_SESSION_ID} printable characters` });
  }
  const at = ctx.now.toISOString();
  const { agent, worktree, branch, scope } = ctx.actor;
  const base: AgentRecord = prev ?? { agent, objective: null, worktree, branch, scope, files: [], awaits: null, session: null, heartbeat_at: at, started_at: at, ended_at: null };
  // Where the agent works now is what others need to see, so a heartbeat refreshes it.
  const record: AgentRecord = { ...base, worktree, branch, scope, heartbeat_at: at, ended_at: null, ...(session !== undefined ? { session } : {}) };
  return { ok: true, record, steps: [{ event: agentEvent("heartbeat", ctx, session !== undefined ? { session } : {}), record }] };
}

export function noSession(agent: string) {
  return {
    code: "not_found" as const,
    message: `agent ${agent} has no session`,
    data: { agent },
    suggestions: [{ action: "fix_input" as const, detail: "start one: git handoff session start --objective TEXT" }],
  };
}
