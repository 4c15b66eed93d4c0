// `cancel --force` on a task whose ref cannot be read (its objects were pruned, or it holds
// something we did not write): there is no record left to cancel, so the ref is removed, by
// compare-and-swap, and the removal is written to the repair log.
import { fail, HandoffError } from "../core/errors.ts";
import { logRepairs } from "./repair-log.ts";
import type { Store } from "./store.ts";
import { loadTask, taskRef } from "./task-store.ts";

/** Removes the task's ref if it is corrupt; null when it is readable (cancel it the usual way). */
export async function removeCorruptTask(store: Store, id: string, reason: string): Promise<{ id: string; removed: string; ref: string } | null> {
  const ref = taskRef(id);
  let why: string;
  try {
    await loadTask(store, id);
    return null;
  } catch (e) {
    if (!(e instanceof HandoffError) || e.code !== "corrupt_state") throw e;
    why = e.message;
  }
  const tip = await store.readRef(ref);
  if (!tip) fail("not_found", `no task ${id}`, { task: id });
  const r = await store.updateRefs([{ ref, new: null, old: tip }]);
  if (!r.ok) fail("lost_race", `${ref} changed while it was being removed; run the command again`, { task: id });
  await logRepairs(store, [{ ref, was: tip, now: null, why: `cancel --force: ${why}; reason: ${reason}` }]);
  return { id, removed: tip, ref };
}
