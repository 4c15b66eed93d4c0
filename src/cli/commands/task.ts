import type { Command } from "commander";
import { TASK_STATUSES, type TaskStatus, type Task } from "../../core/task.ts";
import { fail } from "../../core/errors.ts";
import { normalizeScope } from "../../store/lease-actions.ts";
import { listTasks, TASKS_PREFIX } from "../../store/task-store.ts";
import { listTasksBounded } from "../../store/task-listing.ts";
import { markNewer, notedTaskLines } from "../../present/newer-note.ts";
import { addTaskAfter } from "../../store/dependency-actions.ts";
import { blockingEdges } from "../../core/dependency-graph.ts";
import { checkVerifyCommand } from "../../core/verify-command.ts";
import { collect, parseInteger, withGlobals, withStore } from "../context.ts";
import { verbCommand } from "../verb-command.ts";
import { TASK_SHOW } from "./task-show.ts";
import { emit, moreOnStderr, warn } from "../../present/output.ts";
import { addressOption } from "./address-option.ts";
import { completeOption, printCompletions } from "../complete-ids.ts";
import { TASK_SUBCOMMANDS } from "../command-line.ts";

export function registerTask(program: Command, verb?: string, sub?: string): void {
  const only = verb === "task" && sub !== undefined && TASK_SUBCOMMANDS.includes(sub) ? sub : undefined;
  const wants = (name: string) => only === undefined || only === name;
  const task = program.command("task").description("add, show and list tasks");

  if (wants("add")) withGlobals(
    task
      .command("add")
      .description("add a task; prints its id")
      .argument("<objective...>", "what the task is for")
      .option("--id <id>", "use this id instead of a generated one")
      .option("--priority <n>", "higher is taken first by claim --next", "0")
      .option("--scope <glob>", "files the task will touch (repeatable); claiming the task leases them", collect, [])
      .option("--exclusive", "claiming the task leases its scope exclusively (others are denied edits)")
      .option("--after <id>", "a task that must be done before this one is ready (repeatable: one id per --after)", collect)
      .option("--verify <cmd>", "command that verifies the work: done runs it and sends the task to review")
      .option("--to <address>", "who may take it: KIND@MACHINE, KIND (any machine) or @MACHINE (any agent there)"),
    { writes: true, values: { "--scope": "file", "--after": "task" } },
  ).action(async (words: string[], o: { id?: string; priority: string; scope: string[]; exclusive?: boolean; after?: string[]; verify?: string; to?: string }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const priority = parseInteger(o.priority, "--priority", -1000, 1000);
      const to = o.to !== undefined ? addressOption(o.to) : undefined;
      const created = await addTaskAfter(store, {
        objective: words.join(" "),
        priority,
        scope: normalizeScope(store, o.scope),
        maxAttempts: store.config.maxAttempts,
        ...(o.exclusive ? { exclusive: true } : {}),
        ...(o.id !== undefined ? { id: o.id } : {}),
        ...(o.after ? { after: o.after } : {}),
        ...(o.verify !== undefined ? { verify: checkVerifyCommand(o.verify) } : {}),
        ...(to ? { to } : {}),
      });
      emit(!!g.json, created, () => created.id);
    });
  });

  if (wants("show")) verbCommand(task, TASK_SHOW);

  const list = (name: string, target: Command) =>
    withGlobals(
      target
        .command(name)
        .description("list tasks")
        .option("--status <status>", `only tasks in this state (${TASK_STATUSES.join("|")}), or blocked: todo with an unfinished dependency`)
        .option("--limit <n>", "at most N tasks: with --status todo best first (as claim --next takes them), done/failed/cancelled newest first, otherwise oldest first; how many more, after the list (on stderr with --json)")
        .addOption(completeOption("task ids")),
      { values: { "--status": [...TASK_STATUSES, "blocked"] } },
    ).action(
      async (o: { status?: string; limit?: string; complete?: string }, cmd: Command) => {
        if (o.complete !== undefined) return printCompletions(cmd, TASKS_PREFIX, o.complete);
        await withStore(cmd, async (store, g) => {
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
      },
    );
  if (wants("list")) list("list", task);
  list("tasks", program);
}
