// What coordination caught, recorded where it happened: a refused claim, a hook's non-ok answer,
// a predicted merge conflict. None of these changes a task or a lease, so they have no entity ref
// to live on; each agent appends them to its own ref, refs/handoff/log/<agent>. One writer per ref
// means no contention between agents; the event log (events.ts) reads these refs like any other.
import type { HandoffEvent } from "../core/event.ts";
import { HandoffError } from "../core/errors.ts";
import { eventFromMessage, parseCommit, readTyped, writeSteps } from "./codec.ts";
import { REF_ROOT, type Store } from "./store.ts";

export const LOG_PREFIX = `${REF_ROOT}log/`;
const LOG_FILE = "event.json";

export function logRef(agent: string): string {
  return `${LOG_PREFIX}${agent}`;
}

/** A new event about the calling agent, stamped with the store's clock. */
export function catchEvent(store: Store, type: "claim_refused" | "hook_caught" | "conflict_found" | "claim_overlap" | "received_invalid", details: Partial<HandoffEvent>): HandoffEvent {
  const { agent, scope, worktree, branch } = store.actor;
  return { type, task: "", agent, at: store.now().toISOString(), scope, worktree, branch, ...details };
}

/**
 * Appends events to the caller's log ref under compare-and-swap. Best effort by design: recording
 * a catch must never turn a hook's answer or a command's refusal into a different failure, so a
 * problem here is reported as `false`, not thrown.
 */
export async function recordCatches(store: Store, events: HandoffEvent[]): Promise<boolean> {
  if (!events.length) return true;
  const ref = logRef(store.actor.agent);
  try {
    await store.casLoop(async () => {
      const tip = await store.readRef(ref);
      return { updates: [{ ref, new: writeSteps(store, tip, LOG_FILE, events.map((event) => ({ event, record: event }))), old: tip }], result: null };
    });
    return true;
  } catch (e) {
    if (process.env.HANDOFF_DEBUG) process.stderr.write(`git-handoff: could not record ${events[0]!.type}: ${(e as Error).message}\n`);
    return false;
  }
}

/** The caller's most recent logged events (newest first), at most `limit`: to avoid logging a repeat. */
export async function recentCatches(store: Store, limit: number): Promise<HandoffEvent[]> {
  const ref = logRef(store.actor.agent);
  let oid = await store.readRef(ref);
  const out: HandoffEvent[] = [];
  try {
    while (oid && out.length < limit) {
      const commit = parseCommit(await readTyped(store.reader, oid, "commit", ref));
      const ev = eventFromMessage(commit.message);
      if (ev) out.push(ev);
      oid = commit.parents[0] ?? null;
    }
  } catch (e) {
    if (!(e instanceof HandoffError)) throw e;
  }
  return out;
}
