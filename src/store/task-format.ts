// The record format a task is written in. Builds from before a task field parse task records with
// a schema that drops keys it does not know, so their next write of the task (a `depend`, a
// `claim` of someone else's task) strips the field; when the field carries a rule, the rule is
// gone on every clone that accepts that write. Such builds refuse a record whose format is above
// the one they read (validate-receive.ts: "from a newer git-handoff") and neither use nor rewrite
// it, so a task is written in format 2 while it carries such a field that still decides something:
// today a reclaim that still binds its agent (`reclaimed`, task-ops.ts bindingReclaim). Every other
// task stays in format 1, which older clones read and write as before; the first write after the
// field stops mattering (the next grant, or the task finished) is format 1 again. An older clone
// that saw the task before keeps it held back while a format 2 commit lies between the tip it
// validated and the remote's (it replays every commit since): it reads the task again once
// upgraded, or from a fresh clone.
import { bindingReclaim } from "../core/task-ops.ts";
import type { Task } from "../core/task.ts";

/** A task with a field older builds would drop while it still decides something. */
export const TASK_FORMAT_V2 = 2;
export const TASK_MARKER_V2 = `git-handoff ${TASK_FORMAT_V2}\n`;

/** The blob ids of TASK_MARKER_V2, written out as codec.ts's are (test/task-format.test.ts hashes and compares). */
export const TASK_MARKER_V2_SHA1 = "9f9a8ef491b5b5da8a6549ff846773128a8e7f4c";
export const TASK_MARKER_V2_SHA256 = "854778aa08d0d99830f7d935bdc41b2ff5f47385bf9f67d803949944317d58c5";

export function taskMarkerV2Oid(oidBytes: number): string {
  return oidBytes === 32 ? TASK_MARKER_V2_SHA256 : TASK_MARKER_V2_SHA1;
}

/** Whether `task` is written in format 2 (else format 1, codec.ts FORMAT_MARKER). */
export function needsTaskFormatV2(task: Task): boolean {
  return bindingReclaim(task) !== null;
}
