import { HandoffError } from "../core/errors.ts";
import { fenceRefusal } from "../core/fence.ts";
import type { Refusal } from "../core/errors.ts";
import { refresh } from "./remote-cas.ts";
import type { Store } from "../store/store.ts";
import { loadTask, taskRef } from "../store/task-store.ts";
import { readQuarantine, type Quarantined } from "./quarantine.ts";
import { repairAdvice, repairCommand, type RepairAdvice } from "./repair-hazard.ts";

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
 * takeover happens there; unreachable, the local state answers and `against` says so. A task whose
 * remote ref is kept back here (refused on receive, or from a newer git-handoff) is refused with
 * `quarantined`: the remote holds a state this clone did not take, so the local copy cannot vouch
 * for the holder, and saying "checked against remote state" would be false.
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
  const held = remote ? (await readQuarantine(store, remote)).entries : new Map<string, Quarantined>();
  for (const id of tasks) {
    const { task } = await loadTask(store, id);
    const q = held.get(taskRef(id));
    const refusal = q ? heldBack(id, remote!, q, (await repairAdvice(store, [q])).get(q.ref)) : fenceRefusal(task, store.actor, now, fence);
    const claim = task.claim;
    verdicts.push({ task: id, ok: !refusal, holder: claim?.agent ?? null, fence: claim?.fence ?? task.fence, expires_at: claim?.expires_at ?? null, refusal });
  }
  return { against, verdicts };
}

function heldBack(id: string, remote: string, q: Quarantined, advice: RepairAdvice | undefined): Refusal {
  const why = q.kind === "newer" ? `comes from a newer git-handoff (${q.reason})` : `was refused on receive (${q.reason})`;
  return {
    code: "quarantined",
    message: `cannot check ${id} against ${remote}: its ref there ${why}, so this clone's copy cannot say who holds it`,
    data: { task: id, ref: q.ref, remote, kind: q.kind, reason: q.reason },
    suggestions: [
      q.kind === "newer"
        ? { action: "fix_input", detail: "upgrade git-handoff" }
        : { action: "fix_input", detail: `a person checks the remote (git handoff doctor names the refused step), then: ${repairCommand(advice)}` },
    ],
  };
}

/** Throws the first refusal, for front ends that exit on it. */
export function requireFences(verdicts: FenceVerdict[]): void {
  const bad = verdicts.find((v) => v.refusal);
  if (bad) throw new HandoffError(bad.refusal!);
}
