import type { Command } from "commander";
import { verbCommand } from "../verb-command.ts";
import { TASK_SUBCOMMANDS } from "../command-line.ts";
import { TASK_ADD } from "./task-add.ts";
import { TASK_LIST, TASKS } from "./task-list.ts";
import { TASK_SHOW } from "./task-show.ts";

export function registerTask(program: Command, verb?: string, sub?: string): void {
  const only = verb === "task" && sub !== undefined && TASK_SUBCOMMANDS.includes(sub) ? sub : undefined;
  const wants = (name: string) => only === undefined || only === name;
  const task = program.command("task").description("add, show and list tasks");

  if (wants("add")) verbCommand(task, TASK_ADD);
  if (wants("show")) verbCommand(task, TASK_SHOW);

  if (wants("list")) verbCommand(task, TASK_LIST);
  verbCommand(program, TASKS);
}
