import type { Command } from "commander";
import { TaskStatus } from "../../core/task.ts";
import { fail } from "../../core/errors.ts";
import { normalizeScope } from "../../store/lease-actions.ts";
import { addTask, listTasks, showTask } from "../../store/task-store.ts";
import { collect, parseInteger, withGlobals, withStore } from "../context.ts";
import { emit, warn } from "../output.ts";
import { taskDetail, taskLine } from "../render.ts";

export function registerTask(program: Command): void {
  const task = program.command("task").description("add, show and list tasks");

  withGlobals(
    task
      .command("add")
      .description("add a task; prints its id")
      .argument("<objective...>", "what the task is for")
      .option("--id <id>", "use this id instead of a generated one")
      .option("--priority <n>", "higher is taken first by claim --next", "0")
      .option("--scope <glob>", "files the task will touch (repeatable); claiming the task leases them", collect, [])
      .option("--exclusive", "claiming the task leases its scope exclusively (others are denied edits)"),
  ).action(async (words: string[], o: { id?: string; priority: string; scope: string[]; exclusive?: boolean }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const priority = parseInteger(o.priority, "--priority", -1000, 1000);
      const created = await addTask(store, {
        objective: words.join(" "),
        priority,
        scope: normalizeScope(store, o.scope),
        maxAttempts: store.config.maxAttempts,
        ...(o.exclusive ? { exclusive: true } : {}),
        ...(o.id !== undefined ? { id: o.id } : {}),
      });
      emit(!!g.json, created, () => created.id);
    });
  });

  withGlobals(task.command("show").description("show one task").argument("<id>")).action(async (id: string, _o, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const t = await showTask(store, id);
      emit(!!g.json, t, () => taskDetail(t, store.now()));
    });
  });

  const list = (name: string, target: Command) =>
    withGlobals(target.command(name).description("list tasks").option("--status <status>", `only tasks in this state (${TaskStatus.options.join("|")})`)).action(
      async (o: { status?: string }, cmd: Command) => {
        await withStore(cmd, async (store, g) => {
          if (o.status !== undefined && !TaskStatus.options.includes(o.status as TaskStatus)) {
            fail("invalid_input", `unknown status ${JSON.stringify(o.status)}: use one of ${TaskStatus.options.join(", ")}`);
          }
          const { tasks, problems } = await listTasks(store);
          for (const p of problems) warn(p);
          const shown = o.status ? tasks.filter((t) => t.status === o.status) : tasks;
          const now = store.now();
          emit(!!g.json, shown, () => (shown.length ? shown.map((t) => taskLine(t, now)).join("\n") : "no tasks"));
        });
      },
    );
  list("list", task);
  list("tasks", program);
}
