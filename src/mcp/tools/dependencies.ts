// Dependencies between tasks: the same store functions as the CLI's depend / undepend.
import * as z from "zod/mini";
import { nextCall, steps } from "../../present/suggestions.ts";
import { depend, undepend } from "../../store/dependency-actions.ts";
import { Task } from "../schemas.ts";
import { defineTool } from "../tool.ts";
import { describe, taskId, taskReply } from "./common.ts";

const WRITE = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;
const on = () => describe(z.string(), "the task it waits on");

export const dependTool = defineTool({
  name: "depend",
  title: "Make a task wait on another",
  description: [
    "Make task `id` wait on task `on`: `id` is not ready (ready_tasks lists it under `blocked`, claim_task refuses it with `blocked`) until `on` is done. Whoever claims `id` then receives the handoffs recorded on `on`.",
    "Use it when you split work and one part needs another's result (an API before its client). Adding an edge that exists is harmless.",
    "Refusals: `cycle`: the edge would close a cycle; the message names it, remove an edge first (undepend). `not_found`: one of the tasks does not exist (list_tasks). `invalid_input`: a task cannot wait on itself, or it waits on too many. `final_state`: `id` is already finished.",
  ].join("\n"),
  input: { id: taskId(), on: on() },
  output: { task: Task },
  annotations: { ...WRITE, idempotentHint: true },
  async run(a, { session }) {
    const store = await session.store();
    const t = await depend(store, a.id, a.on);
    return { ...taskReply(store, t, `${t.id} waits on ${(t.after ?? []).join(" ")}`), next: [nextCall(steps.ready(), "what is ready now, and what is blocked")] };
  },
});

export const undependTool = defineTool({
  name: "undepend",
  title: "Remove a dependency",
  description: [
    "Remove the edge \"`id` waits on `on`\" (added with depend or create_task `after`): `id` may become ready.",
    "Use it when the dependency was a mistake or is no longer needed, or to break a cycle named by a `cycle` refusal.",
    "Refusals: `not_found`: no such task, or `id` does not wait on `on`. `final_state`: `id` is already finished.",
  ].join("\n"),
  input: { id: taskId(), on: describe(z.string(), "the task it no longer waits on") },
  output: { task: Task },
  annotations: { ...WRITE, idempotentHint: true },
  async run(a, { session }) {
    const store = await session.store();
    const t = await undepend(store, a.id, a.on);
    const rest = t.after?.length ? `; still waits on ${t.after.join(" ")}` : "";
    return taskReply(store, t, `${t.id} no longer waits on ${a.on}${rest}`);
  },
});

export const DEPENDENCY_TOOLS = [dependTool, undependTool];
