// Tools over the task queue: add, read, list, and what is ready to claim.
import * as z from "zod/mini";
import { TaskStatus } from "../../core/task.ts";
import { blockingEdges } from "../../core/dependency-graph.ts";
import { settle } from "../../core/task-ops.ts";
import { checkVerifyCommand } from "../../core/verify-command.ts";
import { nextCall, steps } from "../../present/suggestions.ts";
import { addTaskAfter, listReady } from "../../store/dependency-actions.ts";
import { viewContext } from "../../store/check-context.ts";
import { normalizeScope } from "../../store/lease-actions.ts";
import { listTasksBounded } from "../../store/task-listing.ts";
import { listTasks, showTask } from "../../store/task-store.ts";
import { parseAddress, type Address } from "../../core/address.ts";
import { fail } from "../../core/errors.ts";
import { MAX_CONTEXT_FILE_BYTES } from "../../core/task-files.ts";
import { createHandover, readInputs } from "../../work/handover.ts";
import { refuseSelfDelegation } from "../../work/self-delegation.ts";
import { markNewer, skippedNewerNote } from "../../present/newer-note.ts";
import { ShownTask, Task } from "../schemas.ts";
import { defineTool } from "../tool.ts";
import { describe, limit, tally, taskId, taskLines, taskReply, taskSummary } from "./common.ts";

/** The name create_task's `context` text travels under (the worker's context files). */
const CONTEXT_NAME = "context.md";

function addressInput(text: string): Address {
  const parsed = parseAddress(text);
  if (!parsed.ok) fail("invalid_input", parsed.message.replace(/^--to/, "to"), { to: text }, [{ action: "fix_input", detail: "e.g. codex@pc, codex or @pc" }]);
  return parsed.address;
}

export const createTask = defineTool({
  name: "create_task",
  title: "Create a task",
  description: [
    "Add a task to the shared queue that every agent of this repository sees, with the same fields as the CLI's `task add`. Use it to record work that you or other agents will claim, e.g. when you split a job into parts: `after` makes it wait on other tasks (it is not ready, and claiming it is refused, until they are done), `verify` is the command complete_task runs before the task may go to review, `exclusive` makes claiming it lease its `scope` exclusively.",
    "It does not claim the task: call claim_task afterwards if you will do it yourself.",
    "To hand work to an agent on another machine (or another kind of agent), pass `to` and what it needs as `context` and `files`: the task and its files are pushed to the sync remote at once, and a `git handoff worker` there takes it. Then call wait_task with the id: it returns the taker's output and saves the files it sent back under ./handoff-<id>/. Do not address a task to the worker you are running inside (refusal `would_deadlock`).",
    "Returns the task; its id is generated (t-xxxxxxxx) unless you pass `id`.",
    "Refusals: `exists`: that id is taken (choose another or leave `id` out). `not_found`: a task named in `after` does not exist (list_tasks). `invalid_input`: fix the argument named in the message (too long, a bad glob, a verify command with a newline, a missing file, `context`/`files` together with scope, after, verify or exclusive).",
  ].join("\n"),
  input: {
    objective: describe(z.string(), "what the task is for, in a sentence or a short paragraph (at most 4000 characters)"),
    id: z.optional(describe(z.string(), "an explicit id (letters, digits, . _ @ + -); leave out for a generated one")),
    priority: z.optional(describe(z.int().check(z.gte(-1000), z.lte(1000)), "higher is taken first by claim_next (default 0)")),
    scope: z.optional(describe(z.array(z.string()), "globs of the files the task will touch, relative to the repository root, e.g. [\"src/parser/**\"]; claiming the task leases them")),
    exclusive: z.optional(describe(z.boolean(), "claiming the task leases its scope exclusively: other agents are denied edits (default: shared)")),
    after: z.optional(describe(z.array(z.string()), "ids of tasks that must be done before this one is ready")),
    verify: z.optional(describe(z.string(), "one line of shell that verifies the work, e.g. \"npm test\": complete_task runs it and sends the task to review")),
    to: z.optional(describe(z.string(), "who may take it: KIND@MACHINE (e.g. codex@pc), KIND (that kind on any machine) or @MACHINE; default anyone. A `git handoff worker` on that machine takes it")),
    context: z.optional(describe(z.string(), "text the taker reads with the objective (notes, the plan, constraints; at most 1 MB); it travels with the task to the other machine")),
    files: z.optional(describe(z.array(z.string()), "input files sent along, paths relative to the repository root and inside it (not under .git, not through a symlink out of it; flat names arrive: at most 100 files, 25 MB together)")),
  },
  output: { task: Task, files: z.array(z.object({ name: z.string(), size: z.number() })) },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    const to = a.to !== undefined ? addressInput(a.to) : null;
    if (a.context !== undefined || a.files?.length) {
      // Handed over with its inputs: created with them in one push, as the CLI's `wait` does.
      if (a.scope?.length || a.after?.length || a.verify !== undefined || a.exclusive) fail("invalid_input", "a task sent with context or files takes objective, id, priority and to only (no scope, after, verify or exclusive)");
      const inputs = readInputs(store.repo.workTree ?? store.cwd, [], a.files ?? [], { context: "context", files: "files" }, store);
      if (a.context !== undefined) {
        if (Buffer.byteLength(a.context) > MAX_CONTEXT_FILE_BYTES) fail("invalid_input", `context is ${Buffer.byteLength(a.context)} bytes; at most ${MAX_CONTEXT_FILE_BYTES}`);
        inputs.context.set(CONTEXT_NAME, Buffer.from(a.context));
      }
      const task = await createHandover(store, { objective: a.objective, priority: a.priority ?? 0, to, inputs, ...(a.id !== undefined ? { id: a.id } : {}) });
      const reply = taskReply(store, task, `created ${task.id} and sent ${inputs.files.size} file${inputs.files.size === 1 ? "" : "s"} with it`);
      return { ...reply, data: { ...reply.data, files: [...inputs.files].map(([name, b]) => ({ name, size: b.length })) }, next: [nextCall(steps.waitTask(task.id), "wait for the result")] };
    }
    if (to) refuseSelfDelegation(to);
    // Addressed to someone (likely on another machine): it goes out at once, as `wait` pushes.
    const push = store.syncOptions.push;
    if (to) store.syncOptions = { ...store.syncOptions, push: true };
    const task = await addTaskAfter(store, {
      ...(to ? { to } : {}),
      objective: a.objective,
      priority: a.priority ?? 0,
      scope: normalizeScope(store, a.scope ?? []),
      maxAttempts: store.config.maxAttempts,
      ...(a.exclusive ? { exclusive: true } : {}),
      ...(a.id !== undefined ? { id: a.id } : {}),
      ...(a.after?.length ? { after: a.after } : {}),
      ...(a.verify !== undefined ? { verify: checkVerifyCommand(a.verify) } : {}),
    }).finally(() => (store.syncOptions = { ...store.syncOptions, push }));
    return { ...taskReply(store, task, `created ${task.id}`), next: to ? [nextCall(steps.waitTask(task.id), "wait for the result")] : [nextCall(steps.claim(task.id), "if you will do it yourself")] };
  },
});

export const getTask = defineTool({
  name: "get_task",
  title: "Get a task",
  description: [
    "Read one task as it stands now: status, holder and lease expiry, fence, attempts, result. An expired lease is shown as free, except another agent's that stands for the takeover grace (with a sync remote, clock skew): shown held, with `grace_until`, as a claim of it is refused until then. `newer_on_remote: true`: the sync remote holds this task from a newer git-handoff (kept back here), so this copy may be stale and it cannot be changed here.",
    "Use it to check a specific task before acting on it; for many tasks use list_tasks or ready_tasks.",
    "Refusal `not_found`: the id does not exist; look it up with list_tasks.",
  ].join("\n"),
  input: { id: taskId() },
  output: { task: ShownTask },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    const task = await showTask(store, a.id);
    return { ...taskReply(store, task, task.id, await store.heldAsNewer()), summary: taskSummary(task) };
  },
});

export const listTasksTool = defineTool({
  name: "list_tasks",
  title: "List tasks",
  description: [
    "List tasks, optionally only those in one status (todo, claimed, done, failed, cancelled), with holder and lease expiry; at most `limit` (default 100) and `total` counts all that match. Another agent's claim that stands for the takeover grace past its expiry (with a sync remote, clock skew) is listed as claimed, with `grace_until`.",
    "Order: status todo comes best first (the order claim_next takes them in); done, failed and cancelled newest first; otherwise oldest first.",
    "To choose work prefer ready_tasks (sorted best first) or claim_next; for a summary of who holds what prefer overview.",
    "A task with `newer_on_remote: true` is held by the sync remote from a newer git-handoff (kept back here): this copy may be stale, and it cannot be claimed or changed here.",
  ].join("\n"),
  input: {
    status: z.optional(describe(TaskStatus, "only tasks in this status")),
    limit: limit(100),
  },
  output: { tasks: z.array(ShownTask), total: z.number(), problems: z.array(z.string()) },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    const { tasks: shown, total, statuses, problems, order } = await listTasksBounded(store, { ...(a.status ? { status: a.status } : {}), limit: a.limit ?? 100 });
    const more = total > shown.length ? `\n(${total - shown.length} more; raise limit or filter by status)` : "";
    const held = await store.heldAsNewer();
    return {
      data: { tasks: markNewer(shown, held), total, problems },
      text: taskLines(store, shown, "no tasks", held) + more + problems.map((p) => `\nwarning: ${p}`).join(""),
      summary: total ? `${total} task${total === 1 ? "" : "s"}: ${tally(statuses)}${more ? ` (${shown.length} shown, ${order})` : ""}` : "no tasks",
    };
  },
});

const Edge = z.object({ task: z.string(), waits_on: z.string(), status: z.string(), holder: z.nullable(z.string()), expires_at: z.nullable(z.string()) });

export const readyTasks = defineTool({
  name: "ready_tasks",
  title: "Tasks ready to claim",
  description: [
    "The tasks you could claim right now, best first: highest priority, then oldest. A task whose lease expired counts as free (another agent's only once its takeover grace has passed: a claim is refused until then). Also `blocked`: the unclaimed tasks that wait on others, each edge with the blocker's status and holder.",
    "Call it when you want to choose what to work on, then claim_task the one you pick; to simply take the best one, call claim_next instead.",
    "If the list is empty, call watch to wait for work (or do something else). A blocked task becomes ready when every task it waits on is done: wait_task on the blocker, or ask its holder.",
    "A task whose claim would write a ref the sync remote holds from a newer git-handoff (kept back here: the task itself, or the lease set its scope would be leased in) cannot be claimed here: it is left out, and `notices` names it.",
  ].join("\n"),
  input: { limit: limit(10) },
  output: { tasks: z.array(Task), total: z.number(), blocked: z.array(z.object({ task: z.string(), objective: z.string(), edges: z.array(Edge) })) },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    // The CLI's `ready`: not blocked, and not addressed to another kind of agent or machine.
    const { ready: shown, total, newer } = await listReady(store, { limit: a.limit ?? 10 });
    const { tasks } = await listTasks(store, { settled: false });
    const now = store.now();
    const byId = new Map(tasks.map((t) => [t.id, t]));
    // Settled as listReady settles (another agent's claim inside the takeover grace is no unclaimed task).
    const ctx = await viewContext(store, now);
    const blocked = tasks
      .filter((t) => (t.after ?? []).length && settle(t, ctx).record.status === "todo")
      .map((t) => ({ task: t.id, objective: t.objective, edges: blockingEdges(t, byId, ctx) }))
      .filter((b) => b.edges.length);
    const blockedText = blocked.map((b) => `blocked: ${b.task} waits on ${b.edges.map((e) => `${e.waits_on} (${e.status}${e.holder ? `, held by ${e.holder}` : ""})`).join(", ")}`);
    const best = shown[0];
    const summary = `${total} ready to claim${best ? `, best ${best.id}` : ""}${blocked.length ? `; ${blocked.length} blocked` : ""}`;
    const next = best ? [nextCall(steps.claim(best.id), "the best ready task"), nextCall(steps.claimNext(), "take the best one, whichever it is then")] : [{ tool: "watch", why: "wait until a task is ready" }];
    return {
      data: { tasks: shown, total, blocked },
      text: [taskLines(store, shown, "no task is ready to claim; call watch to wait for one"), ...blockedText].join("\n"),
      summary,
      next,
      ...(newer.length ? { notices: [skippedNewerNote(newer)] } : {}),
    };
  },
});

export const TASK_TOOLS = [createTask, getTask, listTasksTool, readyTasks];
