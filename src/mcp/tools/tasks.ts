// Tools over the task queue: add, read, list, and what is ready to claim.
import * as z from "zod/mini";
import { readyTasks as readyByDependencies } from "../../core/dependency-graph.ts";
import { TaskStatus } from "../../core/task.ts";
import { blockingEdges } from "../../core/dependency-graph.ts";
import { settle } from "../../core/task-ops.ts";
import { checkVerifyCommand } from "../../core/verify-command.ts";
import { nextCall, steps } from "../../present/suggestions.ts";
import { addTaskAfter } from "../../store/dependency-actions.ts";
import { normalizeScope } from "../../store/lease-actions.ts";
import { listTasksBounded } from "../../store/task-listing.ts";
import { listTasks, showTask } from "../../store/task-store.ts";
import { Task } from "../schemas.ts";
import { defineTool } from "../tool.ts";
import { describe, limit, tally, taskId, taskLines, taskReply, taskSummary } from "./common.ts";

export const createTask = defineTool({
  name: "create_task",
  title: "Create a task",
  description: [
    "Add a task to the shared queue that every agent of this repository sees, with the same fields as the CLI's `task add`. Use it to record work that you or other agents will claim, e.g. when you split a job into parts: `after` makes it wait on other tasks (it is not ready, and claiming it is refused, until they are done), `verify` is the command complete_task runs before the task may go to review, `exclusive` makes claiming it lease its `scope` exclusively.",
    "It does not claim the task: call claim_task afterwards if you will do it yourself.",
    "Returns the task; its id is generated (t-xxxxxxxx) unless you pass `id`.",
    "Refusals: `exists`: that id is taken (choose another or leave `id` out). `not_found`: a task named in `after` does not exist (list_tasks). `invalid_input`: fix the argument named in the message (too long, a bad glob, a verify command with a newline).",
  ].join("\n"),
  input: {
    objective: describe(z.string(), "what the task is for, in a sentence or a short paragraph (at most 4000 characters)"),
    id: z.optional(describe(z.string(), "an explicit id (letters, digits, . _ @ + -); leave out for a generated one")),
    priority: z.optional(describe(z.int().check(z.gte(-1000), z.lte(1000)), "higher is taken first by claim_next (default 0)")),
    scope: z.optional(describe(z.array(z.string()), "globs of the files the task will touch, relative to the repository root, e.g. [\"src/parser/**\"]; claiming the task leases them")),
    exclusive: z.optional(describe(z.boolean(), "claiming the task leases its scope exclusively: other agents are denied edits (default: shared)")),
    after: z.optional(describe(z.array(z.string()), "ids of tasks that must be done before this one is ready")),
    verify: z.optional(describe(z.string(), "one line of shell that verifies the work, e.g. \"npm test\": complete_task runs it and sends the task to review")),
  },
  output: { task: Task },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    const task = await addTaskAfter(store, {
      objective: a.objective,
      priority: a.priority ?? 0,
      scope: normalizeScope(store, a.scope ?? []),
      maxAttempts: store.config.maxAttempts,
      ...(a.exclusive ? { exclusive: true } : {}),
      ...(a.id !== undefined ? { id: a.id } : {}),
      ...(a.after?.length ? { after: a.after } : {}),
      ...(a.verify !== undefined ? { verify: checkVerifyCommand(a.verify) } : {}),
    });
    return { ...taskReply(store, task, `created ${task.id}`), next: [nextCall(steps.claim(task.id), "if you will do it yourself")] };
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
    return { ...taskReply(store, task, task.id), summary: taskSummary(task) };
  },
});

export const listTasksTool = defineTool({
  name: "list_tasks",
  title: "List tasks",
  description: [
    "List tasks, optionally only those in one status (todo, claimed, done, failed, cancelled), with holder and lease expiry; at most `limit` (default 100) and `total` counts all that match.",
    "Order: status todo comes best first (the order claim_next takes them in); done, failed and cancelled newest first; otherwise oldest first.",
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
    const { tasks: shown, total, statuses, problems, order } = await listTasksBounded(store, { ...(a.status ? { status: a.status } : {}), limit: a.limit ?? 100 });
    const more = total > shown.length ? `\n(${total - shown.length} more; raise limit or filter by status)` : "";
    return {
      data: { tasks: shown, total, problems },
      text: taskLines(store, shown, "no tasks") + more + problems.map((p) => `\nwarning: ${p}`).join(""),
      summary: total ? `${total} task${total === 1 ? "" : "s"}: ${tally(statuses)}${more ? ` (${shown.length} shown, ${order})` : ""}` : "no tasks",
    };
  },
});

const Edge = z.object({ task: z.string(), waits_on: z.string(), status: z.string(), holder: z.nullable(z.string()), expires_at: z.nullable(z.string()) });

export const readyTasks = defineTool({
  name: "ready_tasks",
  title: "Tasks ready to claim",
  description: [
    "The tasks you could claim right now, best first: highest priority, then oldest. A task whose lease expired counts as free. Also `blocked`: the unclaimed tasks that wait on others, each edge with the blocker's status and holder.",
    "Call it when you want to choose what to work on, then claim_task the one you pick; to simply take the best one, call claim_next instead.",
    "If the list is empty, call watch to wait for work (or do something else). A blocked task becomes ready when every task it waits on is done: wait_task on the blocker, or ask its holder.",
  ].join("\n"),
  input: { limit: limit(10) },
  output: { tasks: z.array(Task), total: z.number(), blocked: z.array(z.object({ task: z.string(), objective: z.string(), edges: z.array(Edge) })) },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    const { tasks } = await listTasks(store, { settled: false });
    const now = store.now();
    const ready = readyByDependencies(tasks, now);
    const shown = ready.slice(0, a.limit ?? 10);
    const byId = new Map(tasks.map((t) => [t.id, t]));
    const readyIds = new Set(ready.map((t) => t.id));
    const blocked = tasks
      .filter((t) => !readyIds.has(t.id) && (t.after ?? []).length && settle(t, { actor: store.actor, now }).record.status === "todo")
      .map((t) => ({ task: t.id, objective: t.objective, edges: blockingEdges(t, byId, now) }))
      .filter((b) => b.edges.length);
    const blockedText = blocked.map((b) => `blocked: ${b.task} waits on ${b.edges.map((e) => `${e.waits_on} (${e.status}${e.holder ? `, held by ${e.holder}` : ""})`).join(", ")}`);
    const summary = `${ready.length} ready to claim${ready.length ? `, best ${ready[0]!.id}` : ""}${blocked.length ? `; ${blocked.length} blocked` : ""}`;
    const next = ready.length ? [nextCall(steps.claim(ready[0]!.id), "the best ready task"), nextCall(steps.claimNext(), "take the best one, whichever it is then")] : [{ tool: "watch", why: "wait until a task is ready" }];
    return {
      data: { tasks: shown, total: ready.length, blocked },
      text: [taskLines(store, shown, "no task is ready to claim; call watch to wait for one"), ...blockedText].join("\n"),
      summary,
      next,
    };
  },
});

export const TASK_TOOLS = [createTask, getTask, listTasksTool, readyTasks];
