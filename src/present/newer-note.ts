// How views mark a task the sync remote holds in a newer record format (sync/newer-refs.ts): this
// clone's copy of it may be stale and cannot be changed here. `--json` carries newer_on_remote.
import type { NewerRef } from "../store/store.ts";
import { taskRef } from "../store/task-store.ts";

/** The tasks with `newer_on_remote: true` on those held back as newer. */
export function markNewer<T extends { id: string }>(tasks: T[], held: Map<string, NewerRef>): (T & { newer_on_remote?: true })[] {
  return held.size ? tasks.map((t) => (held.has(taskRef(t.id)) ? { ...t, newer_on_remote: true as const } : t)) : tasks;
}

/** The text after a task's line or detail when it is held back as newer, else "". */
export function newerTaskNote(id: string, held: Map<string, NewerRef>): string {
  const q = held.get(taskRef(id));
  return q ? `  (on ${q.remote} from a newer git-handoff: this copy may be stale; upgrade to change it)` : "";
}

/** The stderr line of `ready` and `claim --next` for ready tasks passed over as newer. */
export function skippedNewerNote(ids: string[]): string {
  return `${ids.length} ready task(s) from a newer git-handoff not listed (${ids.join(", ")}): upgrade to take them`;
}
