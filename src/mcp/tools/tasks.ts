// Tools over the task queue: add, read, list, and what is ready to claim.
import * as z from "zod/mini";
import { readyTasks as readyByDependencies } from "../../core/dependency-graph.ts";
import { TaskStatus } from "../../core/task.ts";
import { addTask, listTasks, showTask } from "../../store/task-store.ts";
import { Task } from "../schemas.ts";
import { defineTool } from "../tool.ts";
import { describe, limit, taskId, taskLines, taskReply } from "./common.ts";

export const createTask = defineTool({
  name: "create_task",
  title: "Create a task",
  description: [
    "Add a task to the shared queue that every agent of this repository sees. Use it to record work that you or other agents will claim, e.g. when you split a job into parts.",
    "It does not claim the task: call claim_task afterwards if you will do it yourself.",
    "Returns the task; its id is generated (t-xxxxxxxx) unless you pass `id`.",
    "Refusals: `exists` means that id is taken (choose another or leave `id` out); `invalid_input` means fix the argument named in the message.",
  ].join("\n"),
  input: {
    objective: describe(z.string(), "what the task is for, in a sentence or a short paragraph (at most 4000 characters)"),
    id: z.optional(describe(z.string(), "an explicit id (letters, digits, . _ @ + -); leave out for a generated one")),
    priority: z.optional(describe(z.int().check(z.gte(-1000), z.lte(1000)), "higher is taken first by claim_next (default 0)")),
    scope: z.optional(describe(z.array(z.string()), "globs of the files the task will touch, e.g. [\"src/parser/**\"]")),
  },
  output: { task: Task },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    const task = await addTask(store, {
      objective: a.objective,
      priority: a.priority ?? 0,
      scope: a.scope ?? [],
      maxAttempts: store.config.maxAttempts,
      ...(a.id !== undefined ? { id: a.id } : {}),
    });
    return taskReply(store, task, `created ${task.id}`);
  },
});

export const getTask = defineTool({
  name: "get_task",
  title: "Get a task",
  description: [
    "Read one task as it stands now: status, holder and lease expiry, fence, attempts, result. An expired lease is shown as free.",
    "Use it to check a specific task before acting on it; for many tasks use list_tasks or ready_tasks.",
    "Refusal `not_found`: the id does not exist; look it up with list_tasks.",
  ].join("\n"),
  input: { id: taskId() },
  output: { task: Task },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    const task = await showTask(store, a.id);
    return taskReply(store, task, task.id);
  },
});

export const listTasksTool = defineTool({
  name: "list_tasks",
  title: "List tasks",
  description: [
    "List tasks, oldest first, optionally only those in one status (todo, claimed, done, failed, cancelled), with holder and lease expiry.",
    "To choose work prefer ready_tasks (sorted best first) or claim_next; for a summary of who holds what prefer overview.",
  ].join("\n"),
  input: {
    status: z.optional(describe(TaskStatus, "only tasks in this status")),
    limit: limit(100),
  },
  output: { tasks: z.array(Task), total: z.number(), problems: z.array(z.string()) },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    const { tasks, problems } = await listTasks(store);
    const matching = a.status ? tasks.filter((t) => t.status === a.status) : tasks;
    const shown = matching.slice(0, a.limit ?? 100);
    const more = matching.length > shown.length ? `\n(${matching.length - shown.length} more; raise limit or filter by status)` : "";
    return {
      data: { tasks: shown, total: matching.length, problems },
      text: taskLines(store, shown, "no tasks") + more + problems.map((p) => `\nwarning: ${p}`).join(""),
    };
  },
});

export const readyTasks = defineTool({
  name: "ready_tasks",
  title: "Tasks ready to claim",
  description: [
    "The tasks you could claim right now, best first: highest priority, then oldest. A task whose lease expired counts as free.",
    "Call it when you want to choose what to work on, then claim_task the one you pick; to simply take the best one, call claim_next instead.",
    "If the list is empty, call watch to wait for work (or do something else).",
  ].join("\n"),
  input: { limit: limit(10) },
  output: { tasks: z.array(Task), total: z.number() },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    const { tasks } = await listTasks(store, { settled: false });
    const ready = readyByDependencies(tasks, store.now()); // issue 4: only tasks whose dependencies are done
    const shown = ready.slice(0, a.limit ?? 10);
    return { data: { tasks: shown, total: ready.length }, text: taskLines(store, shown, "no task is ready to claim; call watch to wait for one") };
  },
});

export const TASK_TOOLS = [createTask, getTask, listTasksTool, readyTasks];
