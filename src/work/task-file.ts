// What a task's command is told about the task besides its id and folders: the task file
// (HANDOFF_TASK_FILE) and, for a task done again after its work was rejected in review, the
// reviewer's reason (HANDOFF_REJECTION). Everything in them came from another machine.
import { rejectionToRework } from "../core/review.ts";
import type { Task } from "../core/task.ts";
import { neutralise } from "../present/untrusted.ts";

export function describeTask(task: Task, context: Map<string, Buffer>, files: Map<string, Buffer>, inDir: string): { file: Record<string, unknown>; env: Record<string, string> } {
  // Done before and rejected: the command is told why, or it would do the same again.
  const rejected = rejectionToRework(task);
  // A command that hands the file to an agent should fence it: `untrusted` says so.
  const file = {
    id: task.id,
    objective: task.objective,
    priority: task.priority,
    to: task.to ?? null,
    created_by: task.created_by,
    created_at: task.created_at,
    context: [...context].map(([name, data]) => ({ name, text: data.toString("utf8") })),
    files: [...files.keys()],
    in_dir: inDir,
    rejection: rejected ? { by: rejected.by, at: rejected.at, reason: rejected.reason } : null,
    untrusted: true,
  };
  // The reason (at most 8000 characters) with control characters escaped as on a terminal: a
  // value a shell prints or pastes must not steer it. Set, possibly empty (no reason given), only
  // after a rejection; the task file has it exact.
  const env: Record<string, string> = rejected ? { HANDOFF_REJECTION: neutralise(rejected.reason ?? "") } : {};
  return { file, env };
}
