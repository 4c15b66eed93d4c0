import type { Command } from "commander";
import { buildOverview } from "../../core/overview.ts";
import { listTasks } from "../../store/task-store.ts";
import { withGlobals, withStore } from "../context.ts";
import { emit, warn } from "../output.ts";
import { overviewText } from "../render.ts";

export function registerStatus(program: Command): void {
  withGlobals(program.command("status").description("overview: tasks by state, who holds what, what expires soon")).action(
    async (_o, cmd: Command) => {
      await withStore(cmd, async (store, g) => {
        const { tasks, problems } = await listTasks(store, { settled: false });
        for (const p of problems) warn(p);
        const now = store.now();
        const overview = { ...buildOverview(tasks, now), me: store.actor, problems };
        emit(!!g.json, overview, () => `${store.actor.agent} (${store.actor.scope}${store.actor.branch ? `, ${store.actor.branch}` : ""})\n${overviewText(overview, now)}`);
      });
    },
  );
}
