import { HandoffError } from "../core/errors.ts";
import { fenceRefusal } from "../core/fence.ts";
import type { Refusal } from "../core/errors.ts";
import { refresh } from "./remote-cas.ts";
import type { Store } from "../store/store.ts";
import { loadTask } from "../store/task-store.ts";

export interface FenceVerdict {
  task: string;
  ok: boolean;
  holder: string | null;
  fence: number;
  expires_at: string | null;
  refusal: Refusal | null;
}

/**
 * Whether the calling agent may push work for these tasks: each lease must still be theirs (and
 * carry `fence` when given). With a sync remote the remote's state is fetched first, because a
 * takeover happens there; unreachable, the local state answers and `against` says so.
 */
export async function checkFences(store: Store, tasks: string[], fence?: number): Promise<{ against: "remote" | "local"; verdicts: FenceVerdict[] }> {
  const remote = await store.syncRemote();
  let against: "remote" | "local" = "local";
  if (remote) {
    const r = await refresh(store, remote);
    if (r.ok) against = "remote";
    else store.notices.push(`sync remote ${remote} unreachable (${r.message}); checked against local state`);
  }
  const now = store.now();
  const verdicts: FenceVerdict[] = [];
  for (const id of tasks) {
    const { task } = await loadTask(store, id);
    const refusal = fenceRefusal(task, store.actor, now, fence);
    const claim = task.claim;
    verdicts.push({ task: id, ok: !refusal, holder: claim?.agent ?? null, fence: claim?.fence ?? task.fence, expires_at: claim?.expires_at ?? null, refusal });
  }
  return { against, verdicts };
}

/** Throws the first refusal, for front ends that exit on it. */
export function requireFences(verdicts: FenceVerdict[]): void {
  const bad = verdicts.find((v) => v.refusal);
  if (bad) throw new HandoffError(bad.refusal!);
}
