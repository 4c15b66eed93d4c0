// Who is the agent behind a hook payload, and recording that its session started.
import { heartbeatWithDrift } from "../store/agent-store.ts";
import { heartbeatDriftNote } from "../present/render-drift.ts";
import type { Store } from "../store/store.ts";

/** The agent name a hook acts as: --agent / $HANDOFF_AGENT, else the default derived name. */
export function agentForPayload(_payload: Record<string, unknown>, env: NodeJS.ProcessEnv): string | undefined {
  return env.HANDOFF_AGENT || undefined;
}

/**
 * Registers the session's agent: a heartbeat on refs/handoff/agents/<agent> carrying the agent
 * runtime's session id (Claude Code's `session_id`), so `agents` and `status` map the session to
 * its worktree and branch. Best effort: a session start must never be blocked by bookkeeping.
 * Returns what the heartbeat has to say to the agent (changed paths its drift check could not
 * judge, as `heartbeat` and MCP's `load_context` say it), or "".
 */
export async function registerSession(store: Store, payload: Record<string, unknown>): Promise<string> {
  const id = payload.session_id;
  const session = typeof id === "string" && id.length > 0 && id.length <= 200 && !/[\x00-\x1f]/.test(id) ? id : undefined;
  try {
    return heartbeatDriftNote((await heartbeatWithDrift(store, session !== undefined ? { session } : {})).drift.unjudged);
  } catch {
    return ""; // the context is still worth giving
  }
}
