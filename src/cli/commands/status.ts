import type { Command } from "commander";
import { buildStatus } from "../../core/overview.ts";
import { listAgents } from "../../store/agent-store.ts";
import { predictConflicts } from "../../store/conflicts.ts";
import { listTasks } from "../../store/task-store.ts";
import { buildRoster } from "../../core/agent-roster.ts";
import { withGlobals, withStore } from "../context.ts";
import { emit, warn } from "../output.ts";
import { statusText } from "../render-status.ts";

export function registerStatus(program: Command): void {
  withGlobals(
    program
      .command("status")
      .description("bird's-eye view: agents, task x agent claims, worktrees, blocked edges, review queue, inboxes, leases, predicted conflicts")
      .option("--no-conflicts", "skip the conflict preview (it runs git merge-tree per branch pair)"),
  ).action(async (o: { conflicts: boolean }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const [{ tasks, problems }, { agents, problems: agentProblems }] = await Promise.all([listTasks(store, { settled: false }), listAgents(store)]);
      for (const p of [...problems, ...agentProblems]) warn(p);
      const now = store.now();
      const records = agents.map((a) => a.record);
      const conflicts = o.conflicts ? await predictConflicts(store, { roster: buildRoster(records, tasks, now, store.config) }) : null;
      const view = buildStatus({ tasks, agents: records, conflicts, config: store.config, now });
      const overview = { ...view, me: store.actor, problems: [...problems, ...agentProblems] };
      const me = store.actor;
      emit(!!g.json, overview, () => statusText(view, `${me.agent} (${me.scope}${me.branch ? `, ${me.branch}` : ""})`, now));
    });
  });
}
