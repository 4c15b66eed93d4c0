import { HandoffError } from "../core/errors.ts";
import type { HandoffEvent } from "../core/event.ts";
import { eventFromMessage, parseCommit, readTyped } from "./codec.ts";
import { REF_ROOT, type Store } from "./store.ts";
import { taskRef } from "./task-store.ts";
import { ARCHIVE_REF, archivedTips } from "./archive.ts";

/**
 * For long-running readers (the dashboard): each commit's event and first parent by commit id. A
 * commit never changes, so entries never go stale; only new commits are read.
 */
export type CommitEvents = Map<string, { event: HandoffEvent | null; parent: string | undefined }>;

export interface EventFilter {
  since?: Date;
  task?: string;
  agent?: string;
  type?: string;
  limit?: number;
}

/**
 * The event log, read from the history of every ref under refs/handoff/: each commit's message is
 * one event. Each ref is walked newest first and the walk stops at `since`. The result is in time
 * order; with `limit`, the most recent N.
 */
export async function readEvents(
  store: Store,
  filter: EventFilter,
  opts: { onProblem?: (message: string) => void; commits?: CommitEvents } = {},
): Promise<HandoffEvent[]> {
  let tips = await store.listRefs(REF_ROOT);
  if (filter.task) {
    const name = taskRef(filter.task);
    tips = tips.filter((t) => t.name === name);
    // A compacted task's history hangs off the archive.
    const archived = tips.length ? undefined : (await archivedTips(store)).get(filter.task);
    if (archived) tips = [{ name: `${ARCHIVE_REF} (${filter.task})`, oid: archived }];
  } else if (tips.some((t) => t.name === ARCHIVE_REF)) {
    for (const [id, oid] of await archivedTips(store)) tips.push({ name: `${ARCHIVE_REF} (${id})`, oid });
  }
  const sinceMs = filter.since?.getTime() ?? -Infinity;
  const events: HandoffEvent[] = [];
  // Shared across refs: a ref copied from another must not list the same commits twice.
  const seen = new Set<string>();
  for (const tip of tips) {
    let oid: string | undefined = tip.oid;
    const mine: HandoffEvent[] = [];
    while (oid && !seen.has(oid)) {
      seen.add(oid);
      let known: { event: HandoffEvent | null; parent: string | undefined } | undefined = opts.commits?.get(oid);
      if (!known) {
        let data: Buffer;
        try {
          data = await readTyped(store.reader, oid, "commit", tip.name);
        } catch (e) {
          // One damaged ref must not hide everyone else's history: report it and read the rest.
          if (!(e instanceof HandoffError) || !opts.onProblem) throw e;
          opts.onProblem(e.message);
          break;
        }
        const commit = parseCommit(data);
        known = { event: eventFromMessage(commit.message), parent: commit.parents[0] };
        opts.commits?.set(oid, known);
      }
      const event = known.event;
      if (event) {
        if (Date.parse(event.at) < sinceMs) break;
        if (matches(event, filter)) mine.push(event);
      }
      oid = known.parent;
    }
    // Walked newest first; events of one operation share a time, so restore their order first.
    events.push(...mine.reverse());
  }
  events.sort((a, b) => a.at.localeCompare(b.at));
  return filter.limit !== undefined ? events.slice(Math.max(0, events.length - filter.limit)) : events;
}

function matches(e: HandoffEvent, f: EventFilter): boolean {
  if (f.task && e.task !== f.task) return false;
  if (f.agent && e.agent !== f.agent && e.by !== f.agent) return false;
  if (f.type && e.type !== f.type) return false;
  return true;
}
