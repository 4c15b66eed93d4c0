// Which tasks are claimed, for one-shot commands, without a record per task. A claim's capacity
// check and its overlap advisory look only at claimed tasks, but finding them meant parsing every
// task's record (from tasks.cache, or from git): O(all tasks) in each one-shot claim. A task's
// stored status is a fact of its commit, so `.git/handoff/claimed.index` keeps one line per task
// ref, `<ref> <commit> <status>`, and for a claimed task what a claim reads of it as JSON after a
// tab (claimed-index-file.ts claimedFields; from a record validated when it was read from git): a listing
// compares those commits with the current tips and reads only the records of tasks whose tip moved.
// Lines are appended (one write with O_APPEND; the last line of a ref wins), and the file is
// written anew only when it has grown past twice the task refs. A cache keyed by commits (DESIGN:
// thrown away and rebuilt at will): a torn or foreign line is passed over, and a wrong commit only
// costs a read.
// Most task refs are packed (sync packs them, and so does a one-shot listing that read many loose
// ones), and packed-refs changes only when refs are packed or deleted. So the claimed tasks among
// refs held only in packed-refs are kept too, in `.git/handoff/claimed.packed`, by packed-refs'
// identity (ref-files.ts `listParts`): while it stands, a listing reads the loose task refs (those
// written since the last pack) and their lines of the index, not every packed name and every line
// (a one-shot claim at 5,000 tasks spent 12 ms on that). A line of either file keeps only what the
// capacity check and the overlap advisory read of a claimed task (ClaimedTask: its holder, the
// claim's expiry, the task's age and scope), not its record: at 1,000 tasks, 380 claimed, parsing
// the records was ~2 ms of every cold claim. claimed.packed version 2 and the index's version 3;
// the versions before kept whole records (an older build reads these files as none, and writes its
// own, which this one reads as none; a line one appends to the other's index is read from git).
import { join } from "node:path";
import type { ClaimedTask } from "../core/capacity.ts";
import { HandoffError } from "../core/errors.ts";
import { TASK_STATUSES, type Task } from "../core/task.ts";
import type { RefTip } from "../git/refs.ts";
import { CLAIMED_INDEX_HEADER, claimedFields, claimedFromFields, claimedIndexLine, claimedIndexPath } from "./claimed-index-file.ts";
import { appendNoFollow } from "../git/safe-file.ts";
import { readSmallFile, writeSmallFile } from "./small-file.ts";
import type { Store } from "./store.ts";
import { readTaskAt, TASKS_PREFIX } from "./task-store.ts";
import { byName, mergeSorted, toBytes } from "../git/ref-files.ts";

const STATUSES = new Set<string>(TASK_STATUSES);
const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

interface Entry {
  oid: string;
  status: string;
  /** A claimed task's record as JSON (what a claim reads of it), else undefined. */
  json?: string;
  /** The line itself, written again as it is when the file is rewritten. */
  line: string;
}

/** Bumped with any change of the task record's schema too: its fields are taken unchecked (test/cache-formats.test.ts). */
export const PACKED_HEADER = "handoff-claimed-packed 2";
const indexPath = (store: Store) => claimedIndexPath(store.repo.commonDir);

/**
 * The tasks stored as claimed, in no set order: what a capacity check reads of them, or with
 * `whole` their records (those held in packed-refs alone are then read from git).
 */
export async function claimedTasks(store: Store): Promise<ClaimedTask[]>;
export async function claimedTasks(store: Store, o: { whole: true }): Promise<Task[]>;
export async function claimedTasks(store: Store, o: { whole?: boolean } = {}): Promise<ClaimedTask[]> {
  // A claim moves a task ref next: the loose refs' record read, none written (task-ref-record.ts).
  const parts = store.listRefParts(TASKS_PREFIX, { keep: false });
  const whole = !!o.whole;
  if (!parts) return claimedFromIndex(store, await store.listRefs(TASKS_PREFIX, { keep: false }), whole);
  const summary = join(store.repo.commonDir, "handoff", "claimed.packed");
  // A line naming another commit than packed-refs holds for its ref: the file is not what it says.
  let kept = packedSummary(summary, parts.packedId);
  if (kept && !summaryHolds(kept.tasks, parts)) kept = null;
  // The loose refs' lines are looked up in the index; one that is not ours, or has grown past
  // twice the refs (as claimedFromIndex rewrites it), calls for the full pass that writes it anew.
  const text = kept && parts.loose.size ? readSmallFile(indexPath(store)) : null;
  const indexOk = !kept || !parts.loose.size || (!!text?.startsWith(`${CLAIMED_INDEX_HEADER}\n`) && lineCount(text) <= 2 * (kept.refs + parts.loose.size) + 64);
  if (!kept || !indexOk) {
    const tips = mergeSorted(parts.packed(), parts.loose);
    const claimed = await claimedFromIndex(store, tips, whole);
    // What the full pass found among refs held in packed-refs alone (a loose file overrides its
    // packed value, whose status this pass did not learn).
    const oids = new Map(tips.map((t) => [t.name, t.oid]));
    const lines = claimed
      .map((t) => [TASKS_PREFIX + t.id, t] as const)
      .filter(([ref]) => !parts.loose.has(ref) && oids.has(ref))
      .map(([ref, t]) => `${ref} ${oids.get(ref)}\t${JSON.stringify(claimedFields(t))}\n`);
    try {
      writeSmallFile(summary, `${PACKED_HEADER} ${parts.packedId} ${tips.length}\n${lines.join("")}`);
    } catch {
      /* only the next listing is slower */
    }
    return claimed;
  }
  const packed = kept.tasks.filter((k) => !parts.loose.has(k.ref));
  const claimed: ClaimedTask[] = [];
  if (!o.whole) for (const k of packed) claimed.push(k.task);
  else for (const k of packed) {
    const task = await readOrSkip(store, { name: k.ref, oid: k.oid });
    if (task?.status === "claimed") claimed.push(task);
  }
  if (parts.loose.size) claimed.push(...(await claimedLoose(store, parts.loose, text!, whole)));
  return claimed;
}

/**
 * Whether each line of the summary names the commit packed-refs holds for its ref. Asked of a set
 * of the packed run's lines (`<oid> <name>`, as git writes them: one line a name), not by a
 * search of packed-refs per line: at 1,000 tasks, 380 claimed, the searches were ~40% of a cold
 * claim's capacity check in CPU profiles. A file not in order is asked line by line, as before.
 */
function summaryHolds(tasks: readonly { ref: string; oid: string }[], parts: NonNullable<ReturnType<Store["listRefParts"]>>): boolean {
  const run = tasks.length ? parts.packedRun() : "";
  if (run === null) return tasks.every((k) => parts.readPacked(k.ref) === k.oid);
  const lines = new Set(run.split("\n"));
  return tasks.every((k) => lines.has(`${k.oid} ${toBytes(k.ref)}`));
}

function lineCount(text: string): number {
  let n = 0;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) n++;
  return n;
}

/** The last summary this process read: a claim reads the claimed tasks twice (its capacity, then its overlaps). */
let lastSummary: { path: string; packedId: string; summary: NonNullable<ReturnType<typeof readPackedSummary>> } | null = null;

/**
 * readPackedSummary, once per process and packed-refs identity: what the summary holds follows
 * from packed-refs alone (its claimed tasks among refs held there only), so it cannot differ for
 * one identity. At 5,000 live claims the file is 2.6 MB of records: ~50 ms a read.
 */
function packedSummary(path: string, packedId: string): ReturnType<typeof readPackedSummary> {
  if (lastSummary?.path === path && lastSummary.packedId === packedId) return lastSummary.summary;
  const summary = readPackedSummary(path, packedId);
  lastSummary = summary ? { path, packedId, summary } : null;
  return summary;
}

/**
 * The packed part's claimed tasks kept for packed-refs' identity `packedId`, and the number of
 * task refs the listing had then; null for another identity, or a torn or foreign file.
 */
function readPackedSummary(path: string, packedId: string): { tasks: { ref: string; oid: string; task: ClaimedTask }[]; refs: number } | null {
  const text = readSmallFile(path);
  const head = `${PACKED_HEADER} ${packedId} `;
  const nl = text?.indexOf("\n") ?? -1;
  if (!text?.startsWith(head) || nl < 0 || !/^\d{1,9}$/.test(text.slice(head.length, nl))) return null;
  const refs = Number(text.slice(head.length, nl));
  const out: { ref: string; oid: string; task: ClaimedTask }[] = [];
  for (const line of text.slice(nl + 1).split("\n")) {
    if (!line) continue;
    const sp = line.indexOf(" ");
    const tab = line.indexOf("\t");
    const ref = line.slice(0, sp);
    const task = sp > 0 && tab > sp && OID.test(line.slice(sp + 1, tab)) ? claimedFromFields(line.slice(tab + 1), ref, TASKS_PREFIX) : null;
    if (!task) return null; // a damaged summary is thrown away whole
    out.push({ ref, oid: line.slice(sp + 1, tab), task });
  }
  return { tasks: out, refs };
}

/**
 * The claimed tasks among the loose refs: their last lines in the index (`text`, ours), and refs
 * without a line for their commit are read and appended.
 */
async function claimedLoose(store: Store, loose: Map<string, string>, text: string, whole: boolean): Promise<ClaimedTask[]> {
  const fresh: string[] = [];
  const tips = [...loose].sort(([a], [b]) => byName(a, b)).map(([name, oid]) => ({ name, oid }));
  const claimed = await claimedAmong(store, tips, lastEntries(text, new Set(loose.keys())), fresh, whole);
  if (fresh.length) {
    try {
      appendNoFollow(indexPath(store), fresh.join(""), false);
    } catch {
      /* only the next listing is slower */
    }
  }
  return claimed;
}

/**
 * The last sound line of each of `names` in the index text (the last one wins, as in a full
 * parse), read from the end: loose refs were written since the last pack, so their lines are
 * mostly among the last appended, and the walk stops once all are found.
 */
function lastEntries(text: string, names: Set<string>): Map<string, Entry> {
  const found = new Map<string, Entry>();
  const header = text.indexOf("\n") + 1;
  for (let end = text.length; end > header && found.size < names.size; ) {
    const start = text.lastIndexOf("\n", end - 1) + 1;
    const name = text.slice(start, text.indexOf(" ", start));
    if (start >= header && names.has(name) && !found.has(name)) {
      const e = entryOf(text.slice(start, end));
      if (e) found.set(name, e);
    }
    end = start - 1;
  }
  return found;
}

/**
 * The records of the tasks stored as claimed, in the order of `tips`. A record that cannot be
 * read is left out, as a listing leaves it out of its tasks.
 */
export async function claimedFromIndex(store: Store, tips: readonly RefTip[], whole = false): Promise<ClaimedTask[]> {
  const path = indexPath(store);
  const text = readSmallFile(path);
  const ours = !!text?.startsWith(`${CLAIMED_INDEX_HEADER}\n`);
  const { known, lines } = ours ? parseIndex(text!) : { known: new Map<string, Entry>(), lines: 0 };
  const fresh: string[] = [];
  const claimed = await claimedAmong(store, tips, known, fresh, whole);
  try {
    if (!ours || lines + fresh.length > 2 * tips.length + 64) {
      const current = new Map<string, string>();
      for (const [name, k] of known) current.set(name, `${k.line}\n`);
      for (const l of fresh) current.set(l.slice(0, l.indexOf(" ")), l);
      const names = new Set(tips.map((t) => t.name));
      writeSmallFile(path, `${CLAIMED_INDEX_HEADER}\n${[...current].filter(([n]) => names.has(n)).map(([, l]) => l).join("")}`);
    } else if (fresh.length) appendNoFollow(path, fresh.join(""), false);
  } catch {
    /* a cache that cannot be written only makes the next listing slower */
  }
  return claimed;
}

/**
 * The claimed tasks among `tips`, in their order, by the index lines `known`: a tip without a line
 * for its commit is read from git, and its line is added to `fresh`.
 */
async function claimedAmong(store: Store, tips: readonly RefTip[], known: Map<string, Entry>, fresh: string[], whole: boolean): Promise<ClaimedTask[]> {
  const claimed: ClaimedTask[] = [];
  for (const t of tips) {
    const k = known.get(t.name);
    if (k && k.oid === t.oid) {
      if (k.status !== "claimed") continue;
      // `whole`: the record, from git (the line keeps only what a capacity check reads).
      const task = (!whole && k.json !== undefined && claimedFromFields(k.json, t.name, TASKS_PREFIX)) || (await readOrSkip(store, t));
      if (task) claimed.push(task);
      continue;
    }
    const task = await readOrSkip(store, t);
    if (!task) continue;
    fresh.push(claimedIndexLine(t.name, t.oid, task));
    if (task.status === "claimed") claimed.push(task);
  }
  return claimed;
}

/**
 * Every sound line, the last one of each ref winning; a torn or foreign line is passed over.
 * `lines`: all lines after the header, sound or not (what decides a rewrite).
 */
function parseIndex(text: string): { known: Map<string, Entry>; lines: number } {
  const known = new Map<string, Entry>();
  let lines = 0;
  let at = text.indexOf("\n") + 1;
  while (at < text.length) {
    let end = text.indexOf("\n", at);
    if (end < 0) end = text.length;
    const line = text.slice(at, end);
    at = end + 1;
    lines++;
    const e = entryOf(line);
    if (e) known.set(e.name, e);
  }
  return { known, lines };
}

/** One line of the index, or null when it is torn or foreign. */
function entryOf(line: string): (Entry & { name: string }) | null {
  const a = line.indexOf(" ");
  const b = line.indexOf(" ", a + 1);
  if (a < 0 || b < 0) return null;
  const name = line.slice(0, a);
  const oid = line.slice(a + 1, b);
  const tab = line.indexOf("\t", b + 1);
  const status = line.slice(b + 1, tab < 0 ? undefined : tab);
  if (!name.startsWith(TASKS_PREFIX) || !OID.test(oid) || !STATUSES.has(status)) return null;
  return tab < 0 ? { name, oid, status, line } : { name, oid, status, json: line.slice(tab + 1), line };
}

async function readOrSkip(store: Store, t: RefTip): Promise<Task | null> {
  try {
    return await readTaskAt(store, t.name, t.oid);
  } catch (e) {
    if (e instanceof HandoffError) return null;
    throw e;
  }
}
