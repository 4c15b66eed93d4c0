// The file of claimed-index.ts, `.git/handoff/claimed.index`: its header, its line format, and the
// lines a one-shot writer adds for the task records it has just landed. A claim used to leave its
// own new record for the next command to find out: that command saw a task tip the index did not
// name, read the record from the record cache (a stat of each of its three objects) and appended
// the line itself: its capacity check 4.2 -> 3.6 ms in CPU profiles, where the writer's append
// costs 0.15 (150 loose task refs; no difference in whole-process timings). The writer knows the
// record and its commit, and adds the line once its ref update has landed and its objects were
// checked (Store.updateRefs), so a line never names a commit whose objects a prune took.
import { join } from "node:path";
import { appendNoFollow } from "../git/safe-file.ts";
import type { Task } from "../core/task.ts";

export const CLAIMED_INDEX_HEADER = "handoff-claimed-index 2";

export const claimedIndexPath = (commonDir: string) => join(commonDir, "handoff", "claimed.index");

/** The index's line for `task` at commit `oid` of ref `name`: its record too when it is claimed (what a claim reads of it). */
export function claimedIndexLine(name: string, oid: string, task: Task): string {
  return `${name} ${oid} ${task.status}${task.status === "claimed" ? `\t${JSON.stringify(task)}` : ""}\n`;
}

/**
 * Appends the line of a task record this process wrote and saw land at ref `name` (best effort),
 * to an index that is already there: one that is not is written whole by the next listing, from git.
 */
export function noteLandedTask(commonDir: string, name: string, oid: string, task: Task): void {
  const path = claimedIndexPath(commonDir);
  try {
    // Never through a link there (safe-file.ts); no file, no line: the open says which, no stat first.
    appendNoFollow(path, claimedIndexLine(name, oid, task), false);
  } catch {
    /* only the next listing is slower */
  }
}
