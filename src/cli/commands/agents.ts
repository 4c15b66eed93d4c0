import type { Command } from "commander";
import { AgentStatus } from "../../core/agent.ts";
import { rosterInState } from "../../core/agent-roster.ts";
import { fail } from "../../core/errors.ts";
import { gcAgents } from "../../store/agent-gc.ts";
import { AGENTS_PREFIX } from "../../store/agent-store.ts";
import { rosterView } from "../../store/roster-view.ts";
import { globals, withGlobals, withStore } from "../context.ts";
import { emit, warn } from "../../present/output.ts";
import { rosterText } from "../../present/render-agents.ts";
import { completeOption, printCompletions } from "../complete-ids.ts";

export function registerAgents(program: Command): void {
  withGlobals(
    program
      .command("agents")
      .description("agents by heartbeat: active, stale or disconnected, with their claims, capacity and the git-handoff build each runs")
      .option("--status <status>", `only agents in this state (${AgentStatus.options.join("|")}); holders that never declared a session are listed only without it`)
      .addOption(completeOption("agent names")),
    { values: { "--status": AgentStatus.options } },
  ).action(async (o: { status?: string; complete?: string }, cmd: Command) => {
    if (o.complete !== undefined) return printCompletions(globals(cmd), AGENTS_PREFIX, o.complete);
    if (o.status !== undefined && !AgentStatus.options.includes(o.status as AgentStatus)) {
      fail("invalid_input", `unknown agent status ${JSON.stringify(o.status)}: use one of ${AgentStatus.options.join(", ")}`);
    }
    await withStore(cmd, async (store, g) => {
      const { roster, problems } = await rosterView(store);
      for (const p of problems) warn(p);
      const shown = rosterInState(roster, o.status as AgentStatus | undefined);
      emit(!!g.json, shown, () => rosterText(shown, { builds: true }));
    });
  });

  withGlobals(
    program
      .command("gc")
      .description("remove agents silent past gc_after (default 7d): their ref goes, their claims are released, the removal is logged")
      .option("--dry-run", "show which agents would be removed and which tasks released, change nothing"),
    { writes: true },
  ).action(async (o: { dryRun?: boolean }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const removed = await gcAgents(store, { dryRun: !!o.dryRun });
      const verb = o.dryRun ? "would remove" : "removed";
      emit(!!g.json, { removed, dry_run: !!o.dryRun }, () =>
        removed.length
          ? removed.map((r) => `${verb} ${r.agent} (silent since ${r.last_heartbeat})${r.released.length ? `, ${o.dryRun ? "would release" : "released"} ${r.released.join(" ")}` : ""}`).join("\n")
          : "no agent is due for removal",
      );
    });
  });
}
