// SEAM for issue 4 (agents and sessions). load_context calls registerAgentSession once per call;
// when the agent registry lands, this is the one function to replace with its store call
// (record the agent, its session and its worktree under refs/handoff/agents/).
import type { Store } from "../store/store.ts";

export interface SessionRegistration {
  registered: boolean;
  /** Why nothing was recorded, while the registry does not exist. */
  note?: string;
  session_id?: string;
}

export async function registerAgentSession(_store: Store, input: { session_id?: string }): Promise<SessionRegistration> {
  return {
    registered: false,
    note: "agent and session registration is not available yet; your identity is still used for every claim",
    ...(input.session_id !== undefined ? { session_id: input.session_id } : {}),
  };
}
