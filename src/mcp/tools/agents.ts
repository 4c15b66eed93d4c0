// The agent roster, as the CLI `agents` verb builds it: stored agent records plus their claims.
import * as z from "zod/mini";
import { AgentStatus } from "../../core/agent.ts";
import { buildRoster } from "../../core/agent-roster.ts";
import { rosterText } from "../../present/render-agents.ts";
import { listAgents } from "../../store/agent-store.ts";
import { listTasks } from "../../store/task-store.ts";
import { defineTool } from "../tool.ts";
import { describe } from "./common.ts";

export const listAgentsTool = defineTool({
  name: "list_agents",
  title: "List agents",
  description: [
    "The agents that started a session in this repository, by heartbeat: active, stale or disconnected, each with worktree, branch, the tasks it holds and its capacity.",
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
    const [{ agents, problems }, { tasks, problems: taskProblems }] = await Promise.all([listAgents(store), listTasks(store, { settled: false })]);
    const roster = buildRoster(agents.map((x) => x.record), tasks, store.now(), store.config);
    const shown = a.status ? { ...roster, agents: roster.agents.filter((x) => x.status === a.status) } : roster;
    const warnings = [...problems, ...taskProblems].map((p) => `\nwarning: ${p}`).join("");
    return { data: { ...shown, problems: [...problems, ...taskProblems] }, text: rosterText(shown) + warnings };
  },
});

export const AGENT_TOOLS = [listAgentsTool];
