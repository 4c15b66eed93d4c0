// A claim writes the task's ref and, for a task with a scope, the lease set it leases the scope in.
// When the sync remote holds either from a newer git-handoff (sync/newer-refs.ts), that write is
// refused here (it could never be sent), so whatever offers tasks to claim passes such a task over:
// ready, claim --next, and MCP's ready_tasks, claim_next, watch and load_context.
import type { Task } from "../core/task.ts";
import { LEASES_REF } from "./lease-store.ts";
import type { NewerRef } from "./store.ts";
import { taskRef } from "./task-store.ts";

/** Why such tasks are passed over, after their count and ids. */
export const WHY_PASSED_OVER = "the remote holds them, or the lease set their scope needs, from a newer git-handoff";

/** Whether claiming `t` here would write a ref held back as newer. */
export function claimWritesNewer(t: Task, held: Map<string, NewerRef>): boolean {
  return held.size > 0 && (held.has(taskRef(t.id)) || (t.scope.length > 0 && held.has(LEASES_REF)));
}
