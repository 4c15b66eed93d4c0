import type { Command } from "commander";
import { buildOverview } from "../../core/overview.ts";
import { listTasks } from "../../store/task-store.ts";
import { withGlobals, withStore } from "../context.ts";
import { emit, warn } from "../output.ts";
import { overviewText } from "../render.ts";
import { listTentative, readConflicts, type Conflict } from "../../store/local-area.ts";

function syncText(conflicts: Conflict[], tentative: number): string {
  const lines: string[] = [];
  if (conflicts.length) {
    lines.push("", "sync conflicts (git handoff conflicts --ack once read)");
    for (const c of conflicts) lines.push(`  ${c.message}`);
  }
  if (tentative) lines.push("", `${tentative} tentative offline operation(s): confirmed or refused at the next git handoff sync`);
  return lines.join("\n");
}

export function registerStatus(program: Command): void {
  withGlobals(program.command("status").description("overview: tasks by state, who holds what, what expires soon")).action(
    async (_o, cmd: Command) => {
      await withStore(cmd, async (store, g) => {
        const { tasks, problems } = await listTasks(store, { settled: false });
        for (const p of problems) warn(p);
        const now = store.now();
        // Sync conflicts waiting for this agent, and offline grants not yet confirmed (issue 5).
        const conflicts = await readConflicts(store, store.actor.agent);
        const tentative = (await listTentative(store)).map((t) => ({ ref: t.ref, commit: t.commit, event: t.event }));
        const overview = { ...buildOverview(tasks, now), me: store.actor, problems, conflicts, tentative };
        emit(!!g.json, overview, () => `${store.actor.agent} (${store.actor.scope}${store.actor.branch ? `, ${store.actor.branch}` : ""})\n${overviewText(overview, now)}${syncText(conflicts, tentative.length)}`);
      });
    },
  );
}
