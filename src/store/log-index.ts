// The negotiation and drift events of every agent's log ref (refs/handoff/log/<agent>), read
// through a cache keyed by the refs' tips: `.git/handoff/log-index.json` holds, per log ref, the
// tip it was read at and the events of these types found below it. A ref whose tip did not move
// costs nothing; one that moved is read from its new tip down to the cached tip only. A pre-edit
// hook can afford that. The cache is thrown away and rebuilt at will (a wrong tip is a miss).
import type { HandoffEvent } from "../core/event.ts";
import { HandoffError } from "../core/errors.ts";
import { eventOfTypes, parseCommit, readTyped } from "./codec.ts";
import { LOG_PREFIX } from "./catch-log.ts";
import { readSmallFile, writeSmallFile } from "./small-file.ts";
import type { Store } from "./store.ts";
import { textOrder } from "../core/text-order.ts";

export const INDEXED_TYPES: ReadonlySet<string> = new Set(["undeclared_edit", "release_requested", "release_answered", "request_delivered"]);
/** Commits read below a tip at most, so a long log that never had these events stays bounded. */
const MAX_WALK = 5000;
/** Events kept per ref: the newest; older negotiation is history (`events`), not state. */
const MAX_KEPT = 2000;

/** Bumped with any change of the event's schema: its events are taken unchecked (test/cache-formats.test.ts). */
export const LOG_INDEX_VERSION = 1;

interface IndexFile {
  v: typeof LOG_INDEX_VERSION;
  refs: Record<string, { tip: string; events: HandoffEvent[] }>;
}

function cachePath(store: Store): string {
  return `${store.repo.commonDir}/handoff/log-index.json`;
}

function readIndex(store: Store): IndexFile {
  const text = readSmallFile(cachePath(store));
  if (text) {
    try {
      const parsed = JSON.parse(text) as IndexFile;
      if (parsed && parsed.v === LOG_INDEX_VERSION && typeof parsed.refs === "object") return parsed;
    } catch {
      /* a torn or foreign file is a miss */
    }
  }
  return { v: LOG_INDEX_VERSION, refs: {} };
}

/**
 * Stores whose index is written by saveLogIndex, not as it is brought up to date: a pre-edit hook
 * that found a log moved writes it after its answer (the write was ~0.3-0.6 ms before it). What
 * the index would hold meanwhile is kept here, so a second read in the process starts from it.
 */
const held = new WeakMap<Store, IndexFile | null>();

/** indexedLogEvents on `store` writes the index only at saveLogIndex. */
export function holdLogIndex(store: Store): void {
  if (!held.has(store)) held.set(store, null);
}

/** Writes the index the reads since holdLogIndex brought up to date, if they changed it. */
export function saveLogIndex(store: Store): void {
  const next = held.get(store);
  held.delete(store);
  if (next) writeSmallFile(cachePath(store), JSON.stringify(next));
}

/** The indexed events of every log ref, oldest first. */
export async function indexedLogEvents(store: Store): Promise<HandoffEvent[]> {
  const index = held.get(store) ?? readIndex(store);
  const tips = await store.listRefs(LOG_PREFIX);
  const next: IndexFile = { v: LOG_INDEX_VERSION, refs: {} };
  let changed = tips.length !== Object.keys(index.refs).length;
  for (const { name, oid } of tips) {
    const cached = index.refs[name];
    if (cached && cached.tip === oid) {
      next.refs[name] = cached;
      continue;
    }
    changed = true;
    const fresh: HandoffEvent[] = [];
    let at: string | undefined = oid;
    let reachedCache = false;
    for (let n = 0; at && n < MAX_WALK; n++) {
      if (cached && at === cached.tip) {
        reachedCache = true;
        break;
      }
      let commit;
      try {
        commit = parseCommit(await readTyped(store.reader, at, "commit", name));
      } catch (e) {
        if (!(e instanceof HandoffError)) throw e;
        break;
      }
      const ev = eventOfTypes(commit.message, INDEXED_TYPES);
      if (ev) fresh.push(ev);
      at = commit.parents[0];
    }
    const events = [...(reachedCache ? cached!.events : []), ...fresh.reverse()];
    next.refs[name] = { tip: oid, events: events.slice(Math.max(0, events.length - MAX_KEPT)) };
  }
  if (changed) {
    if (held.has(store)) held.set(store, next);
    else writeSmallFile(cachePath(store), JSON.stringify(next));
  }
  return Object.values(next.refs)
    .flatMap((r) => r.events)
    .sort((a, b) => textOrder(a.at, b.at));
}
