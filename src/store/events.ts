import { fail, HandoffError } from "../core/errors.ts";
import type { HandoffEvent } from "../core/event.ts";
import { eventFromMessage, parseCommit, readTyped } from "./codec.ts";
import { REF_ROOT, TASKS_PREFIX, type Store } from "./store.ts";
import { taskRef } from "./task-store.ts";
import { ARCHIVE_REF, archivedTips, archivedTipsFrom } from "./archive.ts";
import { agentKey, decodeLine, dropIndex, readIndexedLines, readIndexedLinesByHead, readIndexHead, readPartnersIndexed, readStatsIndexed, refreshIndex, type IndexReport, type KeyLines } from "./event-index.ts";
import { needsPartners, type CountedTimes } from "../core/stats.ts";
import { textOrder } from "../core/text-order.ts";

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
  opts: { onProblem?: (message: string) => void; commits?: CommitEvents; index?: boolean; onIndex?: (r: IndexReport) => void } = {},
): Promise<HandoffEvent[]> {
  const useIndex = opts.index && !filter.task && !opts.commits;
  if (useIndex) {
    const quick = fromHead(store, filter, opts);
    if (quick) return quick;
  }
  const { tips, stamp } = await eventTips(store, filter);
  if (useIndex) {
    const indexed = (await fromIndex(store, tips, stamp, filter, opts)) ?? (await fromIndex(store, tips, stamp, filter, opts));
    if (indexed) return indexed;
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
        // One ref's history is newest first: its last N are found once N match.
        if (tips.length === 1 && filter.limit !== undefined && mine.length >= filter.limit) break;
      }
      oid = known.parent;
    }
    // Walked newest first; events of one operation share a time, so restore their order first.
    events.push(...mine.reverse());
  }
  events.sort((a, b) => textOrder(a.at, b.at));
  return filter.limit !== undefined ? events.slice(Math.max(0, events.length - filter.limit)) : events;
}

/** The key file that holds every event the filter can match. */
const keyOf = (filter: EventFilter) => (filter.agent ? `agent-${agentKey(filter.agent)}` : filter.type ? `type-${filter.type}` : "all");

/**
 * The answer from the event index when no ref moved since it was last brought up to date: from
 * its manifest's head (event-index-files.ts ManifestHead), without listing the refs. Null: the refs
 * are not read from files here, they moved, or the key file is damaged (the index is dropped).
 */
function fromHead(store: Store, filter: EventFilter, opts: { onProblem?: (message: string) => void; onIndex?: (r: IndexReport) => void }): HandoffEvent[] | null {
  const head = readIndexHead(store);
  if (!head) return null;
  const events = newestOf((keep) => readIndexedLinesByHead(store, head, keyOf(filter), keep), filter);
  if (!events) {
    dropIndex(store, head);
    return null;
  }
  opts.onIndex?.({ walked: 0, added: 0, rebuilt: false });
  reportProblems(head.problems, opts);
  return events;
}

/**
 * The same answer read from the event index (event-index.ts), or null when it cannot serve it now
 * (another process is updating it, or it was damaged, dropped, and could not be built again).
 */
async function fromIndex(
  store: Store,
  tips: { name: string; oid: string }[],
  stamp: string | null,
  filter: EventFilter,
  opts: { onProblem?: (message: string) => void; onIndex?: (r: IndexReport) => void },
): Promise<HandoffEvent[] | null> {
  // Each ref's place among the tips, for the few refs the key file names (not a map of every tip).
  const order = (names: ReadonlySet<string>) => {
    const places = new Map<string, number>();
    tips.forEach((t, i) => names.has(t.name) && places.set(t.name, i));
    return places;
  };
  const key = keyOf(filter);
  // A damaged index is dropped and built again at once (as for stats below), not left to the next call.
  for (let n = 0; n < 2; n++) {
    const manifest = await openIndex(store, tips, stamp, opts);
    if (!manifest) return null;
    const events = newestOf((keep) => readIndexedLines(store, manifest, key, order, keep), filter);
    if (events) return events;
    dropIndex(store, manifest);
  }
  return null;
}

/**
 * The events of a key file's lines (`read`: every line, or, given a number, the lines of the newest
 * times, at least that many) that match the filter, as newest gives them. With a limit, the lines
 * of the newest times first (~1,000 lines in an agent's file at 100,000 events, 20 asked for);
 * where those hold fewer than the limit (lines of refs no longer live, a commit on two refs,
 * events the filter leaves out), more of them, then every line. Null when damaged.
 */
function newestOf(read: (keep: number | null) => KeyLines | null, filter: EventFilter): HandoffEvent[] | null {
  const limit = filter.limit;
  for (const keep of limit === undefined ? [null] : [limit, limit * 8, null]) {
    const lines = read(keep);
    const events = lines && newest(lines, filter);
    if (events !== MORE) return events;
  }
  return null;
}

/** newest's answer when the lines it was given, only of the newest times, hold too few events. */
const MORE = Symbol("more");

/**
 * The lines' events that match the filter, each commit once, in time order; with `limit`, the
 * newest N, decoding only the lines of the newest times until N are found. Null when a line it
 * decodes is damaged; MORE when N are not found in lines that are not all (KeyLines.partial).
 */
function newest(read: KeyLines, filter: EventFilter): HandoffEvent[] | null | typeof MORE {
  const sinceMs = filter.since?.getTime() ?? -Infinity;
  const limit = filter.limit;
  // Every line, unless a limit is asked for and every line's time could be read undecoded.
  const some = limit !== undefined && read.lines.every((l) => l.at !== null);
  const lines = some ? read.lines.slice().sort((a, b) => (a.at! < b.at! ? 1 : a.at! > b.at! ? -1 : 0)) : read.lines;
  const kept: { event: HandoffEvent; ref: number; seq: number }[] = [];
  for (let i = 0; i < lines.length && !(some && kept.length >= limit); ) {
    // The lines of one time (of them all, without a limit): a commit's lines on two refs share it.
    let j = some ? i + 1 : lines.length;
    while (j < lines.length && lines[j]!.at === lines[i]!.at) j++;
    // A commit reached from two refs is listed once, as the first ref in order lists it.
    const byOid = new Map<string, { event: HandoffEvent; ref: number; seq: number }>();
    for (; i < j; i++) {
      const l = lines[i]!;
      const event = decodeLine(l);
      if (!event) return null;
      if (!matches(event, filter) || Date.parse(event.at) < sinceMs) continue;
      const seen = byOid.get(l.oid);
      if (!seen || l.ref < seen.ref) byOid.set(l.oid, { event, ref: l.ref, seq: l.seq });
    }
    for (const k of byOid.values()) kept.push(k);
  }
  if (read.partial && (limit === undefined || kept.length < limit)) return MORE;
  kept.sort((a, b) => (a.event.at < b.event.at ? -1 : a.event.at > b.event.at ? 1 : a.ref - b.ref || a.seq - b.seq));
  const events = kept.map((l) => l.event);
  return limit !== undefined ? events.slice(Math.max(0, events.length - limit)) : events;
}

/**
 * The refs whose history is the event log (a task filter: that task's only), archived tasks
 * included; without a task filter, where refs are files, with RefFiles' stamp of that listing.
 */
async function eventTips(store: Store, filter: EventFilter): Promise<{ tips: { name: string; oid: string }[]; stamp: string | null }> {
  const listed = filter.task ? null : store.listRefsStamped(REF_ROOT);
  let tips = listed ? listed.tips : await store.listRefs(REF_ROOT);
  if (filter.task) {
    // The task's own history, and the refs that are not tasks': events about it are also kept on
    // the agents' logs (a refused claim, a hook's catch), memories, the lease set and others.
    const name = taskRef(filter.task);
    const own = tips.filter((t) => t.name === name);
    const others = tips.filter((t) => !t.name.startsWith(TASKS_PREFIX) && t.name !== ARCHIVE_REF);
    // A compacted task's history hangs off the archive.
    const archived = own.length ? undefined : (await archivedTips(store)).get(filter.task);
    tips = [...(archived ? [{ name: `${ARCHIVE_REF} (${filter.task})`, oid: archived }] : own), ...others];
  } else {
    // The archive as listed: its entries are part of what the stamp stands for.
    const archive = tips.find((t) => t.name === ARCHIVE_REF);
    if (archive) for (const [id, oid] of await archivedTipsFrom(store, archive.oid)) tips.push({ name: `${ARCHIVE_REF} (${id})`, oid });
  }
  return { tips, stamp: listed?.stamp ?? null };
}

/**
 * What `stats` reads: every event it needs the details of, and the times of the rest (see
 * statsProjection), from the event index when it can serve them, else from the history itself.
 */
export async function readStatsEvents(
  store: Store,
  opts: { onProblem?: (message: string) => void; onIndex?: (r: IndexReport) => void; since?: Date | null } = {},
): Promise<{ events: HandoffEvent[]; counted: CountedTimes; partners?: HandoffEvent[] }> {
  // No ref moved since the index was last brought up to date: its head alone (as fromHead).
  const head = readIndexHead(store);
  if (head && !head.shared) {
    const read = readStatsIndexed(store, head, (opts.since ?? null) !== null);
    const partners = read && needsPartners(read.events) ? readPartnersIndexed(store, head) : [];
    if (read && partners) {
      opts.onIndex?.({ walked: 0, added: 0, rebuilt: false });
      reportProblems(head.problems, opts);
      return { ...read, partners };
    }
    dropIndex(store, head);
  }
  const { tips, stamp } = await eventTips(store, {});
  for (let n = 0; n < 2; n++) {
    const manifest = await openIndex(store, tips, stamp, opts);
    // Refs that share commits: the times stats only counts are kept per ref, not per commit, and
    // the walk below reads each commit once.
    if (!manifest || manifest.shared) break;
    const read = readStatsIndexed(store, manifest, (opts.since ?? null) !== null);
    const partners = read && needsPartners(read.events) ? readPartnersIndexed(store, manifest) : [];
    if (read && partners) return { ...read, partners };
    dropIndex(store, manifest);
  }
  return { events: await readEvents(store, {}, opts), counted: [] };
}

async function openIndex(store: Store, tips: { name: string; oid: string }[], stamp: string | null, opts: { onProblem?: (message: string) => void; onIndex?: (r: IndexReport) => void }) {
  const fresh = await refreshIndex(store, tips, stamp);
  if (!fresh) return null;
  opts.onIndex?.(fresh.report);
  const { manifest } = fresh;
  const problems: [string, string][] = [];
  for (const t of tips) {
    const problem = manifest.refs[t.name]?.problem;
    if (problem) problems.push([t.name, problem]);
  }
  reportProblems(problems, opts);
  return manifest;
}

/** As a direct walk: each damaged ref is reported (or fails the read) and the rest still counts. */
function reportProblems(problems: [string, string][], opts: { onProblem?: (message: string) => void }): void {
  for (const [ref, problem] of problems) {
    if (!opts.onProblem) fail("corrupt_state", problem, { ref });
    opts.onProblem(problem);
  }
}

function matches(e: HandoffEvent, f: EventFilter): boolean {
  if (f.task && e.task !== f.task) return false;
  if (f.agent && e.agent !== f.agent && e.by !== f.agent) return false;
  if (f.type && e.type !== f.type) return false;
  return true;
}
