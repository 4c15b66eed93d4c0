// Seam for issue 4 (agents and sessions): who is the agent behind a hook payload, and recording
// that a session started. Until that lands the agent comes from --agent / $HANDOFF_AGENT / the
// default name, and a session start records nothing.
import type { Store } from "../store/store.ts";

/** The agent name a hook acts as, from its payload (e.g. a Claude session_id), or undefined for the default. */
export function agentForPayload(_payload: Record<string, unknown>, env: NodeJS.ProcessEnv): string | undefined {
  return env.HANDOFF_AGENT || undefined;
}

/** Registers the session's agent (issue 4 writes refs/handoff/agents/<agent> here). */
export async function registerSession(_store: Store, _payload: Record<string, unknown>): Promise<void> {}
