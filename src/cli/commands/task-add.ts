// `task add <objective...>`: one verb, its command line as data and the function that runs it
// (verb-spec.ts), read by commander's program (task.ts) and by the hot bundle's fast reading
// (fast-line.ts) alike.
import { normalizeScope } from "../../store/lease-actions.ts";
import { addTaskAfter } from "../../store/dependency-actions.ts";
import { checkVerifyCommand } from "../../core/verify-command.ts";
import { parseInteger, withStoreFor } from "../context.ts";
import { verb } from "../verb-command.ts";
import { emit } from "../../present/output.ts";
import { addressOption } from "./address-option.ts";

export const TASK_ADD = verb<[string[]], { id?: string; priority: string; scope: string[]; exclusive?: boolean; after?: string[]; verify?: string; to?: string }>(
  {
    words: ["task", "add"],
    description: "add a task; prints its id",
    args: [["<objective...>", "what the task is for"]],
    options: [
      { flags: "--id <id>", description: "use this id instead of a generated one" },
      { flags: "--priority <n>", description: "higher is taken first by claim --next", default: "0" },
      { flags: "--scope <glob>", description: "files the task will touch (repeatable); claiming the task leases them", repeat: true, default: [] },
      { flags: "--exclusive", description: "claiming the task leases its scope exclusively (others are denied edits)" },
      { flags: "--after <id>", description: "a task that must be done before this one is ready (repeatable: one id per --after)", repeat: true },
      { flags: "--verify <cmd>", description: "command that verifies the work: done runs it and sends the task to review" },
      { flags: "--to <address>", description: "who may take it: KIND@MACHINE, KIND (any machine) or @MACHINE (any agent there)" },
    ],
    globals: { writes: true, values: { "--scope": "file", "--after": "task" } },
  },
  ([words], o) =>
    withStoreFor(o, async (store, g) => {
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
    }),
);
