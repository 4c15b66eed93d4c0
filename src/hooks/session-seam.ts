// Who is the agent behind a hook payload, and recording that its session started.
import { heartbeatFor } from "../store/agent-store.ts";
import type { Store } from "../store/store.ts";

/** The agent name a hook acts as: --agent / $HANDOFF_AGENT, else the default derived name. */
export function agentForPayload(_payload: Record<string, unknown>, env: NodeJS.ProcessEnv): string | undefined {
  return env.HANDOFF_AGENT || undefined;
}

/**
 * Registers the session's agent: a heartbeat on refs/handoff/agents/<agent> carrying the agent
 * runtime's session id (Claude Code's `session_id`), so `agents` and `status` map the session to
 * its worktree and branch. Best effort: a session start must never be blocked by bookkeeping.
 */
export async function registerSession(store: Store, payload: Record<string, unknown>): Promise<void> {
  const id = payload.session_id;
  const session = typeof id === "string" && id.length > 0 && id.length <= 200 && !/[\x00-\x1f]/.test(id) ? id : undefined;
  try {
    await heartbeatFor(store, session !== undefined ? { session } : {});
  } catch {
    /* the context below is still worth giving */
  }
}
