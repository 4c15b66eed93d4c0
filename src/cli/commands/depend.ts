import type { Command } from "commander";
import { skippedNewerNote } from "../../present/newer-note.ts";
import { parseDuration } from "../../core/duration.ts";
import { fail } from "../../core/errors.ts";
import { depend, listReady, undepend } from "../../store/dependency-actions.ts";
import { claimNextReporting } from "../../store/task-actions.ts";
import { emitClaim } from "./claim-task.ts";
import { parseInteger, withGlobals, withStore } from "../context.ts";
import { emit, moreOnStderr, warn } from "../../present/output.ts";
import { taskLine } from "../../present/render.ts";

function needOn(on: string | undefined, verb: string): string {
  if (on === undefined) fail("usage", `${verb} needs --on TASK`);
  return on;
}

export function registerDepend(program: Command): void {
  withGlobals(
    program
      .command("depend")
      .description("make a task wait on another: it is not ready (and claiming it is refused) until that one is done; cycles are refused")
      .argument("<task>", "the task that waits")
      .option("--on <task>", "the task it waits on"),
    { writes: true, values: { task: "task", "--on": "task" } },
  ).action(async (id: string, o: { on?: string }, cmd: Command) => {
    const on = needOn(o.on, "depend");
    await withStore(cmd, async (store, g) => {
      const t = await depend(store, id, on);
      emit(!!g.json, t, () => `${t.id} waits on ${(t.after ?? []).join(" ")}`);
    });
  });

  withGlobals(
    program.command("undepend").description("remove a dependency added with depend or task add --after").argument("<task>").option("--on <task>", "the task it no longer waits on"),
    { writes: true, values: { task: "task", "--on": "task" } },
  ).action(async (id: string, o: { on?: string }, cmd: Command) => {
    const on = needOn(o.on, "undepend");
    await withStore(cmd, async (store, g) => {
      const t = await undepend(store, id, on);
      emit(!!g.json, t, () => `${t.id} no longer waits on ${on}${t.after?.length ? `; still waits on ${t.after.join(" ")}` : ""}`);
    });
  });

  withGlobals(
    program
      .command("ready")
      .description("unclaimed tasks whose dependencies are all done, best first; --claim takes the best one atomically")
      .option("--claim", "claim the best ready task (priority, then age); exit 3 if none")
      .option("--limit <n>", "at most N tasks (the best N), with how many more are ready (on stderr with --json)")
      .option("--ttl <duration>", "lease length with --claim")
      .option("--over-capacity", "with --claim: even though this agent already holds as many tasks as its capacity"),
    { writes: true },
  ).action(async (o: { claim?: boolean; ttl?: string; overCapacity?: boolean; limit?: string }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const limit = o.limit === undefined ? undefined : parseInteger(o.limit, "--limit", 1, 1_000_000);
      if (o.claim) {
        // The same claim as claim --next: scope leased, overlaps reported.
        if (o.ttl !== undefined) parseDuration(o.ttl, "--ttl");
        await emitClaim(store, !!g.json, await claimNextReporting(store, { ...(o.ttl !== undefined ? { ttl: o.ttl } : {}), overCapacity: !!o.overCapacity }));
        return;
      }
      const { ready, total, problems, newer } = await listReady(store, limit === undefined ? {} : { limit });
      for (const p of problems) warn(p);
      if (newer.length) warn(skippedNewerNote(newer));
      const now = store.now();
      const more = total > ready.length ? `\n(${total - ready.length} more ready, best first; raise --limit)` : "";
      emit(!!g.json, ready, () => (ready.length ? ready.map((t) => taskLine(t, now)).join("\n") + more : "no task is ready"));
      if (g.json) moreOnStderr(more);
    });
  });
}
