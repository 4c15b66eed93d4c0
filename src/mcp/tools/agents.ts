// The agent roster, as the CLI `agents` verb builds it: stored agent records plus their claims.
import * as z from "zod/mini";
import { AgentStatus } from "../../core/agent.ts";
import { rosterInState } from "../../core/agent-roster.ts";
import { agentDetail, rosterText } from "../../present/render-agents.ts";
import { nextCall, steps } from "../../present/suggestions.ts";
import { declarationFields, declareSession } from "../agent-registration.ts";
import { rosterView } from "../../store/roster-view.ts";
import { defineTool } from "../tool.ts";
import { describe } from "./common.ts";

const AgentRow = z.record(z.string(), z.unknown());

export const listAgentsTool = defineTool({
  name: "list_agents",
  title: "List agents",
  description: [
    "The agents that started a session in this repository, by heartbeat: active, stale or disconnected, each with worktree, branch, the tasks it holds, its capacity and the git-handoff build it runs (`build`: version, commit, dirty; null from builds that did not record it).",
    "Call it to find whom to hand over to (handoff `to`), whom to ask about a lease or claim, or whether a holder is still alive before considering reclaim_task. Filter with `status`.",
    "Refusal `invalid_input`: an unknown status.",
  ].join("\n"),
  input: { status: z.optional(describe(AgentStatus, `only agents in this state (${AgentStatus.options.join(", ")})`)) },
  output: {
    agents: z.array(z.record(z.string(), z.unknown())),
    undeclared_holders: z.array(z.record(z.string(), z.unknown())),
    problems: z.array(z.string()),
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    const { roster, problems } = await rosterView(store);
    const shown = rosterInState(roster, a.status);
    const warnings = problems.map((p) => `\nwarning: ${p}`).join("");
    return {
      data: { ...shown, problems },
      text: rosterText(shown, { builds: true }) + warnings,
      summary: shown.agents.length ? `${shown.agents.length} agent${shown.agents.length === 1 ? "" : "s"}: ${shown.agents.map((x) => `${x.agent} (${x.status})`).join(", ")}`.slice(0, 300) : "no agents",
    };
  },
});

export const declareSessionTool = defineTool({
  name: "declare_session",
  title: "Declare your session",
  description: [
    "Tell the other agents what you are working on: your objective, the files you plan to change and the outcome you wait for (and from whom). Recorded on your agent ref with your worktree and branch, as the CLI's `session start`; list_agents shows it to everyone.",
    "Call it at the start of a session (load_context takes the same fields, so one call can do both) and again when your objective changes. Planned files are a declaration, not a lease: lease_files keeps others out.",
    "Refusal `invalid_input`: an empty objective, or text too long (the message names the field).",
  ].join("\n"),
  input: declarationFields("required"),
  output: { agent: AgentRow },
  annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    const record = await declareSession(store, a);
    return {
      data: { agent: record },
      text: `session started for ${record.agent}\n${agentDetail(record)}`,
      summary: `declared ${record.agent}: ${record.objective ?? ""}`.slice(0, 300),
      next: [nextCall(steps.ready(), "choose a task to claim"), { tool: "lease_files", arguments: { paths: record.files }, why: "keep others out of the files you plan to change" }].filter((n) => n.tool !== "lease_files" || record.files.length),
    };
  },
});

export const AGENT_TOOLS = [listAgentsTool, declareSessionTool];
