// load_context registers the agent (issue 4): a heartbeat on refs/handoff/agents/<agent> that
// declares it if it never started a session, reopens an ended one, and records the client's
// session id when given. Its objective and planned files come from `git handoff session start`.
import { heartbeatFor } from "../store/agent-store.ts";
import type { Store } from "../store/store.ts";

export interface SessionRegistration {
  registered: boolean;
  /** Why nothing was recorded, when registration failed. */
  note?: string;
  session_id?: string;
}

export async function registerAgentSession(store: Store, input: { session_id?: string }): Promise<SessionRegistration> {
  const record = await heartbeatFor(store, input.session_id !== undefined ? { session: input.session_id } : {});
  return { registered: true, ...(record.session !== null ? { session_id: record.session } : {}) };
}
