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
import type { ClaimedTask } from "../core/capacity.ts";
import type { Task } from "../core/task.ts";

// Version 3: a claimed task's line keeps what a capacity check reads of it (claimedFields), not its
// record (version 2). A line of the other version appended by another build is read from git.
// Bumped with any change of the task record's schema too (test/cache-formats.test.ts).
export const CLAIMED_INDEX_HEADER = "handoff-claimed-index 3";

export const claimedIndexPath = (commonDir: string) => join(commonDir, "handoff", "claimed.index");

/** The index's line for `task` at commit `oid` of ref `name`: what a claim reads of it too when it is claimed. */
export function claimedIndexLine(name: string, oid: string, task: Task): string {
  return `${name} ${oid} ${task.status}${task.status === "claimed" ? `\t${JSON.stringify(claimedFields(task))}` : ""}\n`;
}

/**
 * What the capacity check and the overlap advisory read of a claimed task (core/capacity.ts
 * ClaimedTask), as the index and claimed.packed keep it: `[id, holder, expires_at, created_at,
 * scope]`, holder and expiry null for no claim; its status "claimed". The id is its ref's: a line
 * naming another task is not believed, as a record naming another was not.
 */
export function claimedFields(t: ClaimedTask): [string, string | null, string | null, string, string[]] {
  return [t.id, t.claim?.agent ?? null, t.claim?.expires_at ?? null, t.created_at, t.scope];
}

/** A claimed task of ref `ref` from its claimedFields' JSON, or null when the text is torn, foreign or names another task. */
export function claimedFromFields(json: string, ref: string, prefix: string): ClaimedTask | null {
  if (json[0] !== "[") return null;
  let f: unknown;
  try {
    f = JSON.parse(json);
  } catch {
    return null;
  }
  if (!Array.isArray(f) || f.length !== 5) return null;
  const [id, agent, expires, created, scope] = f as unknown[];
  if (typeof id !== "string" || ref !== prefix + id) return null;
  const claim = typeof agent === "string" && typeof expires === "string" ? { agent, expires_at: expires } : agent === null && expires === null ? null : undefined;
  if (claim === undefined || typeof created !== "string" || !Array.isArray(scope) || !scope.every((s) => typeof s === "string")) return null;
  return { id, status: "claimed", created_at: created, scope: scope as string[], claim };
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
