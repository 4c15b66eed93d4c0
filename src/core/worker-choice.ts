// Which ready tasks a worker passes over though it could claim them. A task whose verify command
// was neither written nor approved in this clone: `done` would refuse to run it, and a worker has
// no person at hand to read and approve it, so it leaves the task in the queue (for a clone that
// approved it, or for this one once a person has). With --addressed-only, a task addressed to
// anyone: that worker is kept for work sent to it. Pure: what is approved here is a parameter.
import type { Refusal } from "./errors.ts";
import type { Task } from "./task.ts";
import { handoffCommand } from "./shell-quote.ts";

export interface WorkerChoice {
  /** Take only tasks with a `to` this worker matches (the match itself is the claim's own rule). */
  addressedOnly: boolean;
  /** Whether this exact command was written or approved in this clone. */
  approved: (command: string) => boolean;
}

/** Why the worker leaves `task` for others, or null when it takes it. `data.passed_over` names the rule. */
export function workerPassOver(task: Task, c: WorkerChoice): Refusal | null {
  if (c.addressedOnly && !task.to) {
    return {
      code: "wrong_state",
      message: `task ${task.id} is addressed to anyone; this worker takes only tasks addressed to it (--addressed-only)`,
      data: { task: task.id, passed_over: "unaddressed" },
    };
  }
  if (task.verify && !c.approved(task.verify)) {
    return {
      code: "wrong_state",
      message: `task ${task.id}'s verify command was not written or approved in this clone, so this worker leaves it: ${JSON.stringify(task.verify)} (written by ${task.created_by})`,
      data: { task: task.id, passed_over: "unapproved_command", command: task.verify, author: task.created_by },
      suggestions: [{ action: "fix_input", detail: `a person (not an agent) reads it and approves it: ${handoffCommand("approve", task.id)}` }],
    };
  }
  return null;
}
