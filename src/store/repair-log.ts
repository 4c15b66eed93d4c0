// refs/handoff-local/repair-log: one commit per repair (a ref removed or restored because its
// objects were missing), so what a repair threw away is never silent. Local to this clone: it
// records what happened here, not coordination state.
import { commitObject } from "./codec.ts";
import type { Store } from "./store.ts";

export const REPAIR_LOG_REF = "refs/handoff-local/repair-log";

export interface Repair {
  ref: string;
  /** What the ref pointed at before the repair. */
  was: string;
  /** What it points at now, or null when it was removed. */
  now: string | null;
  why: string;
}

export async function logRepairs(store: Store, repairs: Repair[]): Promise<void> {
  if (!repairs.length) return;
  const tree = store.writer.write("tree", Buffer.alloc(0));
  for (let n = 0; n < 10; n++) {
    const parent = await store.readRef(REPAIR_LOG_REF);
    const summary = repairs.length === 1 ? `${repairs[0]!.now ? "restored" : "removed"} ${repairs[0]!.ref}` : `repaired ${repairs.length} refs`;
    const body = JSON.stringify({ type: "repair", at: store.now().toISOString(), by: store.actor.agent, repairs }, null, 2);
    const commit = store.writer.write("commit", commitObject({ tree, parent, author: store.actor.agent, at: store.now(), message: `${summary}\n\n${body}\n` }));
    if ((await store.updateRefs([{ ref: REPAIR_LOG_REF, new: commit, old: parent }])).ok) return;
  }
}
