// The session loop's record at refs/handoff/loop: read, and changed by compare-and-swap. Each change
// is one commit whose event says what changed, so `git log refs/handoff/loop` is the loop's story.
import { dirname, join } from "node:path";
import { appendNoFollow, ownFolder, readTextNoFollow } from "../git/safe-file.ts";
import type { HandoffEvent } from "../core/event.ts";
import { LoopRecord } from "../core/loop-record.ts";
import { writeSteps } from "./codec.ts";
import { REF_ROOT, type Store } from "./store.ts";

export const LOOP_REF = `${REF_ROOT}loop`;
export const LOOP_FILE = "loop.json";

export async function loadLoop(store: Store): Promise<{ record: LoopRecord; tip: string } | null> {
  const tip = await store.readRef(LOOP_REF);
  if (!tip) return null;
  return { record: await store.record(LOOP_REF, tip, LOOP_FILE, LoopRecord), tip };
}

/**
 * Applies `change` to the current record (null: none yet) and writes the result, re-reading on a
 * lost race so the change always applies to the latest state. `change` returns null to write
 * nothing, or the new record and a one-line note of what changed.
 */
export function changeLoop(store: Store, change: (current: LoopRecord | null, now: Date) => { record: LoopRecord; note: string } | null): Promise<LoopRecord | null> {
  return store.casLoop(async (now) => {
    const cur = await loadLoop(store);
    // Records from the store are shared (cached by commit): the change works on its own copy.
    const out = change(cur ? structuredClone(cur.record) : null, now);
    if (!out) return { updates: [], result: cur?.record ?? null };
    const record = { ...out.record, updated_at: now.toISOString() };
    const { agent, scope, worktree, branch } = store.actor;
    const event: HandoffEvent = { type: "loop", task: "", agent, at: now.toISOString(), scope, worktree, branch, note: `${record.id}: ${out.note}` };
    const commit = writeSteps(store, cur?.tip ?? null, LOOP_FILE, [{ event, record }]);
    return { updates: [{ ref: LOOP_REF, new: commit, old: cur?.tip ?? null }], result: record };
  });
}

/**
 * Which loops were started in this clone: a local file beside the git dir's other local state, so
 * sync never brings one. A loop record that came through the sync remote is shown, never acted on
 * here (no agent signalled, no folder removed, no resume), whatever host and pid it names.
 */
const startedFile = (store: Store) => join(store.repo.commonDir, "handoff", "loops-started");

export function markLoopStartedHere(store: Store, id: string): void {
  ownFolder(dirname(startedFile(store)));
  appendNoFollow(startedFile(store), `${id}\n`, true);
}

export function loopStartedHere(store: Store, id: string): boolean {
  try {
    return (readTextNoFollow(startedFile(store)) ?? "").split("\n").includes(id);
  } catch {
    return false;
  }
}
