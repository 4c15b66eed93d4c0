// The roster as `agents` and MCP list_agents show it: every agent by heartbeat with the tasks it
// holds, another agent's claim inside the takeover grace counted as held (check-context.ts
// storeViewer), as `status` counts it and as a claim of that task is refused.
import { buildRoster, type Roster } from "../core/agent-roster.ts";
import { listAgents } from "./agent-store.ts";
import { storeViewer } from "./check-context.ts";
import type { Store } from "./store.ts";
import { listTasks } from "./task-store.ts";

/** The roster, and what could not be read on the way (agents' and tasks' problems). */
export async function rosterView(store: Store): Promise<{ roster: Roster; problems: string[] }> {
  const [{ agents, problems }, { tasks, problems: taskProblems }, viewer] = await Promise.all([listAgents(store), listTasks(store, { settled: false }), storeViewer(store)]);
  const roster = buildRoster(agents.map((a) => a.record), tasks, store.now(), store.config, viewer);
  return { roster, problems: [...problems, ...taskProblems] };
}
