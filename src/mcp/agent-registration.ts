// load_context and declare_session register the agent: a record on refs/handoff/agents/<agent>.
// Without an objective it is a heartbeat (it declares the agent if it never started a session,
// reopens an ended one, records the client's session id when given). With one it is the CLI's
// `session start`: objective, planned files and what the agent awaits, the same store function.
import * as z from "zod/mini";
import type { AgentRecord } from "../core/agent.ts";
import { fail } from "../core/errors.ts";
import { gcAgents } from "../store/agent-gc.ts";
import { heartbeatWithDrift, startSessionFor } from "../store/agent-store.ts";
import type { Store } from "../store/store.ts";
import { describe } from "./tools/common.ts";

export interface SessionRegistration {
  registered: boolean;
  /** Whether an objective was declared by this call. */
  declared: boolean;
  /** Why nothing was recorded, when registration failed. */
  note?: string;
  session_id?: string;
  /** When this call was a heartbeat: how many paths changed in this worktree it could not judge against the declaration (never recorded as drift). */
  unjudged?: number;
}

export interface SessionDeclaration {
  objective?: string;
  files?: string[];
  awaits?: string;
  session_id?: string;
}

/** The declaration fields, shared by load_context and declare_session. */
export const declarationFields = (objective: "required" | "optional") => {
  const o = describe(z.string(), "what you are working on, in a sentence (other agents see it in list_agents)");
  return {
    objective: objective === "required" ? o : z.optional(o),
    files: z.optional(describe(z.array(z.string()).check(z.maxLength(100)), "files or globs you plan to change, relative to the repository root")),
    awaits: z.optional(describe(z.string(), "the outcome you wait for, and from whom (e.g. \"the API from bob\")")),
    session_id: z.optional(describe(z.string(), "your client's session id, if you know it")),
  };
};

export async function declareSession(store: Store, input: SessionDeclaration): Promise<AgentRecord> {
  if (input.objective === undefined) fail("invalid_input", "declaring files or awaits needs an objective");
  const record = await startSessionFor(store, {
    objective: input.objective,
    files: input.files ?? [],
    awaits: input.awaits ?? null,
    session: input.session_id ?? null,
  });
  // As `session start`: a starting agent sweeps agents silent past gc_after; never fails the start.
  await gcAgents(store).catch(() => []);
  return record;
}

export async function registerAgentSession(store: Store, input: SessionDeclaration): Promise<SessionRegistration & { record: AgentRecord }> {
  const declaring = input.objective !== undefined || input.files !== undefined || input.awaits !== undefined;
  if (declaring) {
    const record = await declareSession(store, input);
    return { registered: true, declared: true, ...(record.session !== null ? { session_id: record.session } : {}), record };
  }
  const { record, drift } = await heartbeatWithDrift(store, input.session_id !== undefined ? { session: input.session_id } : {});
  return { registered: true, declared: false, ...(record.session !== null ? { session_id: record.session } : {}), unjudged: drift.unjudged, record };
}
