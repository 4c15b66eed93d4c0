// `task list` and `tasks`: one verb under two names, its command line as data and the function
// that runs it (verb-spec.ts), read by commander's program (task.ts) and by the hot bundle's fast
// reading (fast-line.ts) alike.
import { TASK_STATUSES, type TaskStatus, type Task } from "../../core/task.ts";
import { fail } from "../../core/errors.ts";
import { listTasks, TASKS_PREFIX } from "../../store/task-store.ts";
import { listTasksBounded } from "../../store/task-listing.ts";
import { markNewer, notedTaskLines } from "../../present/newer-note.ts";
import { blockingEdges } from "../../core/dependency-graph.ts";
import { parseInteger, withStoreFor, type GlobalOptions } from "../context.ts";
import { verb } from "../verb-command.ts";
import type { VerbSpec } from "../verb-spec.ts";
import { emit, moreOnStderr, warn } from "../../present/output.ts";
import { completeOptionSpec, printCompletions } from "../complete-ids.ts";

const listSpec = (words: string[]): VerbSpec => ({
  words,
  description: "list tasks",
  args: [],
  options: [
    { flags: "--status <status>", description: `only tasks in this state (${TASK_STATUSES.join("|")}), or blocked: todo with an unfinished dependency` },
    { flags: "--limit <n>", description: "at most N tasks: with --status todo best first (as claim --next takes them), done/failed/cancelled newest first, otherwise oldest first; how many more, after the list (on stderr with --json)" },
    completeOptionSpec("task ids"),
  ],
  globals: { values: { "--status": [...TASK_STATUSES, "blocked"] } },
});

async function listing(_args: [], o: { status?: string; limit?: string; complete?: string } & GlobalOptions): Promise<void> {
  if (o.complete !== undefined) return printCompletions(o, TASKS_PREFIX, o.complete);
  await withStoreFor(o, async (store, g) => {
    if (o.status !== undefined && o.status !== "blocked" && !TASK_STATUSES.includes(o.status as TaskStatus)) {
      fail("invalid_input", `unknown status ${JSON.stringify(o.status)}: use one of ${[...TASK_STATUSES, "blocked"].join(", ")}`);
    }
    let shown: Task[];
    let more = "";
    if (o.limit !== undefined && o.status !== "blocked") {
      // Bounded: only the N returned are settled and shown (task-listing.ts).
      const limit = parseInteger(o.limit, "--limit", 1, 1_000_000);
      const r = await listTasksBounded(store, { ...(o.status ? { status: o.status as TaskStatus } : {}), limit });
      for (const p of r.problems) warn(p);
      shown = r.tasks;
      if (r.total > r.tasks.length) more = `\n(${r.total - r.tasks.length} more, ${r.order}; raise --limit)`;
    } else {
      const { tasks, problems } = await listTasks(store);
      for (const p of problems) warn(p);
      const now = store.now();
      const byId = new Map(tasks.map((t) => [t.id, t]));
      // `blocked` is not a state of its own: a todo task with a dependency not done (todo still lists it).
      shown = o.status === "blocked" ? tasks.filter((t) => t.status === "todo" && blockingEdges(t, byId, now).length > 0) : o.status ? tasks.filter((t) => t.status === o.status) : tasks;
    }
    const held = await store.heldAsNewer();
    emit(!!g.json, markNewer(shown, held), () => (shown.length ? notedTaskLines(shown, held, store.now()).join("\n") + more : "no tasks"));
    if (g.json) moreOnStderr(more);
  });
}

export const TASK_LIST = verb(listSpec(["task", "list"]), listing);
export const TASKS = verb(listSpec(["tasks"]), listing);
