// Validate on receive: a ref fetched from the sync remote enters refs/handoff/ only if what it
// holds is something git-handoff could have written. Records are data from anyone with push access;
// the same pure core operations that decide a local write decide whether each received commit was a
// legal step from its parent's state. This file decides which commits of a ref are judged; each is
// read and bounded on its own in received-entry.ts, and judged as a step by its family's rules
// (task-receive.ts, lease-receive.ts, loop-receive.ts, archive-receive.ts).
import { newMatchBudget, RECEIVE_MATCH_BUDGET, type MatchBudget } from "../core/match-budget.ts";
import type { LoopRecord } from "../core/loop-record.ts";
import type { Task } from "../core/task.ts";
import type { GitObject } from "../git/object-reader.ts";
import { eventFromMessage, parseCommit } from "../store/codec.ts";
import { familyNamed, placeOf, type RefFamily } from "../store/ref-families.ts";
import type { Store } from "../store/store.ts";
import { archiveStepProblem } from "./archive-receive.ts";
import { checkLeaseStep } from "./lease-receive.ts";
import { checkLoopStep } from "./loop-receive.ts";
import { CLOCK_SKEW_MS, invalid, Refusal } from "./receive-refusal.ts";
import { authorOf, entryAt, readCommitWithin, type Entry } from "./received-entry.ts";
import { checkTaskStep } from "./task-receive.ts";

/**
 * Commits judged on one ref in one receive: those since the tip validated last, or a task's whole
 * history when the clone first sees it. A task's history is short (a claim renewed every ten
 * minutes for a month is some 4,500 commits): a longer line is refused, not judged for minutes.
 */
export const MAX_HISTORY = 10_000;
/** How many of the lease set's last operations a clone checks when it first sees the ref. */
const FIRST_SIGHT_STEPS = 16;

/**
 * `operation`: author and event time of the commit that failed, when known. Refs written by one
 * operation (a claim's task and its scope's leases) carry the same pair, so they are held back together.
 */
export type Verdict = { ok: true } | { ok: false; kind: "invalid" | "newer"; reason: string; operation?: string };

/** The key that ties together the commits one operation wrote on several refs. */
export function operationKey(author: string, at: string): string {
  return `${author}\n${at}`;
}

type Judge = (e: Entry, parent: Entry | null) => void;

/**
 * Judges the remote's `tip` of `ref`. `anchor` is the last tip of it this clone validated (null on
 * first sight): a compare-and-swap family must descend from it, and every commit since is checked
 * as an operation on its parent. On first sight a task is checked from its creation (down to what
 * this clone holds of it already), the loop from its start, the lease set's last operations; any
 * other ref by its tip record and bounds.
 */
export async function validateReceived(store: Store, ref: string, tip: string, anchor: string | null, now: Date): Promise<Verdict> {
  let current: Entry | null = null;
  try {
    const place = placeOf(ref);
    if (place.kind === "bad") invalid(`unknown layout: ${place.reason}`);
    if (place.kind === "unknown") throw new Refusal("newer", `family ${JSON.stringify(place.family)} is not known to this build`);
    if (place.kind !== "known") return { ok: true };
    const { family, id } = place;
    // Units of matching (match-budget.ts), not comparisons: one comparison of two costly globs took
    // seconds. However many leases a forged set holds, judging the ref stops at the budget.
    const budget = newMatchBudget(RECEIVE_MATCH_BUDGET);
    const judge: Judge = (e, parent) => {
      current = e;
      checkStep(family, id, e, parent, budget);
    };
    const head = await entryAt(store, family, id, tip, now);
    // A task's inputs are written once, with the task (whose "created" step names that commit):
    // a commit on top of them is nobody's inputs.
    if (family.family === "inputs" && head.commit.parents.length) invalid(`commit ${tip.slice(0, 12)} is written over ${head.commit.parents[0]!.slice(0, 12)}: a task's inputs are written once, with the task`);
    if (anchor === tip) return { ok: true };
    if (anchor === null) await firstSight(store, ref, family, id, head, now, judge);
    else await sinceAnchor(store, ref, family, id, head, anchor, now, judge);
    return { ok: true };
  } catch (err) {
    const at = current as Entry | null;
    const operation = at?.event ? operationKey(at.author, at.event.at) : undefined;
    if (err instanceof Refusal) return { ok: false, kind: err.kind, reason: err.message, ...(operation ? { operation } : {}) };
    return { ok: false, kind: "invalid", reason: (err as Error).message };
  }
}

/** The commits since `anchor`, each on its parent; an owner's ref by its authors only. */
async function sinceAnchor(store: Store, ref: string, family: RefFamily, id: string | null, head: Entry, anchor: string, now: Date, judge: Judge): Promise<void> {
  const line = await lineDown(store, family, id, head, anchor, now, { refuseLong: family.writers !== "owner" });
  if (family.writers === "owner") {
    // A heartbeat may replace its parent, so the line need not reach the anchor: authors must match.
    for (const e of line.fresh) if (e.author !== id) invalid(`commit ${e.oid.slice(0, 12)} was written by ${JSON.stringify(e.author)}; only ${id} writes ${ref}`);
    return;
  }
  if (line.capped) invalid(`more than ${MAX_HISTORY} new commits on ${ref} since ${anchor.slice(0, 12)}, the last state validated here: refused, not judged`);
  if (!line.reached) invalid(`rewritten history: the remote's ${head.oid.slice(0, 12)} does not descend from ${anchor.slice(0, 12)}, the last state validated here`);
  let parent = await entryAt(store, family, id, anchor, now);
  for (let i = line.fresh.length - 1; i >= 0; i--) {
    const e = line.fresh[i]!;
    if (family.writers === "cas") judge(e, parent);
    if (family.file === null) await checkArchive(store, family, e, parent.oid, now);
    parent = e;
  }
}

/** A ref this clone has not validated before (a fresh clone, or a task created elsewhere). */
async function firstSight(store: Store, ref: string, family: RefFamily, id: string | null, head: Entry, now: Date, judge: Judge): Promise<void> {
  // The archive seen first: its last append (a long history is not replayed).
  if (family.file === null) await checkArchive(store, family, head, head.commit.parents[0] ?? null, now);
  if (family.writers === "owner" && head.author !== id) invalid(`commit ${head.oid.slice(0, 12)} was written by ${JSON.stringify(head.author)}; only ${id} writes ${ref}`);
  if (family.writers !== "cas") return;
  if (family.family === "tasks" || family.family === "loop") {
    // Its tip alone would vouch for a past nobody checked: a second "created" naming other
    // inputs, a finished task reopened, a loop's plan changed mid-run. So its line is judged from
    // its first commit (the task's creation; the commit that started the tip's loop), down to what
    // this clone holds of it already: written here, or validated when received.
    const local = await store.readRef(ref);
    if (local === head.oid) return;
    const loopId = family.family === "loop" ? (head.record as LoopRecord).id : null;
    const line = await lineDown(store, family, id, head, local, now, loopId === null ? { refuseLong: true } : { within: (e) => (e.record as LoopRecord).id === loopId });
    if (line.capped) invalid(`${ref} has a history of more than ${MAX_HISTORY} commits, which a first sight judges whole: refused, not judged`);
    return judgeLine(line.fresh, line.reached ? await entryAt(store, family, id, local!, now) : line.outside, judge);
  }
  // Any other: its tip, as a first commit. The lease set, exclusivity's one ref, also as the last
  // few operations on their parents: a set written over another without replaying it (an older
  // build's sync) drops others' live leases, and a clone seeing the ref first would grant them again.
  judge(head, null);
  if (family.family === "leases") {
    const line = await lineDown(store, family, id, head, null, now, { limit: FIRST_SIGHT_STEPS + 1 });
    judgeLine(line.fresh.slice(0, -1), line.fresh[line.fresh.length - 1]!, judge);
  }
}

/** Judges `fresh` (newest first) oldest first, the oldest on `base` (null: it is the ref's first commit). */
function judgeLine(fresh: Entry[], base: Entry | null, judge: Judge): void {
  for (let i = fresh.length - 1; i >= 0; i--) judge(fresh[i]!, fresh[i + 1] ?? base);
}

interface Line {
  /** From the head down, newest first. */
  fresh: Entry[];
  /** The line reached `stop`. */
  reached: boolean;
  /** The first commit outside `within`, where the line ended. */
  outside: Entry | null;
  /** The line went on past `limit` commits. */
  capped: boolean;
}

/** How lineDown reads a line. */
interface LineOptions {
  /** The line ends at its first commit outside this (its entry is `outside`). */
  within?: (e: Entry) => boolean;
  /** At most this many commits are read (default MAX_HISTORY); past them the line is `capped`. */
  limit?: number;
  /**
   * The caller refuses a capped line whole: its length is then known from its commits' parent
   * lines before any is judged. Judging a commit reads its tree, format marker and record (~0.4 ms
   * of CPU each), which made a remote's 10,000-commit history cost ~4 s to refuse. The commits
   * read to count the line are the ones judged after, not read twice.
   */
  refuseLong?: boolean;
}

/**
 * The commits of `head`'s first-parent line, read and bounded one by one, down to `stop` (not
 * read), the root, the first commit outside `within`, or `limit` commits.
 */
async function lineDown(store: Store, family: RefFamily, id: string | null, head: Entry, stop: string | null, now: Date, o: LineOptions = {}): Promise<Line> {
  const limit = o.limit ?? MAX_HISTORY;
  const counted = o.refuseLong && !o.within ? await firstParents(store, family, head, stop, limit) : null;
  if (counted === "capped") return { fresh: [head], reached: false, outside: null, capped: true };
  const fresh = [head];
  for (let e = head; ; ) {
    const p = e.commit.parents[0];
    if (!p) return { fresh, reached: false, outside: null, capped: false };
    if (p === stop) return { fresh, reached: true, outside: null, capped: false };
    if (fresh.length >= limit) return { fresh, reached: false, outside: null, capped: true };
    e = await entryAt(store, family, id, p, now, counted?.get(p));
    if (o.within && !o.within(e)) return { fresh, reached: false, outside: e, capped: false };
    fresh.push(e);
  }
}

/**
 * The commits below `head` on its first-parent line, down to `stop`, the root or the first that
 * cannot be read as a commit (left for entryAt to say why), by id; "capped" when the line goes on
 * past `limit` commits with `head`, counted as lineDown counts them.
 */
async function firstParents(store: Store, family: RefFamily, head: Entry, stop: string | null, limit: number): Promise<Map<string, GitObject> | "capped"> {
  const read = new Map<string, GitObject>();
  for (let p = head.commit.parents[0], n = 1; p && p !== stop; n++) {
    if (n >= limit) return "capped";
    const obj = await readCommitWithin(store, family, p);
    if (!obj || obj.type !== "commit") break;
    read.set(p, obj);
    p = parseCommit(obj.data).parents[0];
  }
  return read;
}

/** An archive commit is an append as compaction writes it (archive-receive.ts). */
async function checkArchive(store: Store, archive: RefFamily, e: Entry, parentOid: string | null, now: Date): Promise<void> {
  const tasks = familyNamed("tasks")!;
  const parent = parentOid ? { oid: parentOid, commit: (await entryAt(store, archive, null, parentOid, now)).commit } : null;
  const problem = await archiveStepProblem(store, e, parent, async (id, oid) => (await entryAt(store, tasks, id, oid, now)).record as Task);
  if (problem) invalid(problem);
}

/** A compare-and-swap family's commit is a legal operation from its parent's state (null: the ref's first commit). */
function checkStep(family: RefFamily, id: string | null, e: Entry, parent: Entry | null, budget: MatchBudget): void {
  if (!e.event) invalid(`commit ${e.oid.slice(0, 12)} carries no event`);
  const ev = e.event!;
  const actor = ev.by ?? ev.agent;
  if (e.author !== actor) invalid(`commit ${e.oid.slice(0, 12)} is authored by ${JSON.stringify(e.author)} but its event is by ${JSON.stringify(actor)}`);
  // Clones' clocks differ by a little: two writes in quick succession from two machines may come
  // out of order by that much (the lease set, every agent's, most of all). More is a wrong clock.
  if (parent?.event && Date.parse(ev.at) < Date.parse(parent.event.at) - CLOCK_SKEW_MS) invalid(`event time ${ev.at} is before its parent's (${parent.event.at}) by more than ${CLOCK_SKEW_MS / 60_000} minutes`);
  if (family.family === "tasks") return checkTaskStep(id, e, parent);
  if (!parent) return;
  if (family.family === "leases") return checkLeaseStep(e, parent, budget);
  if (family.family === "loop") return checkLoopStep(e, parent);
}

/** Whether a commit between `anchor` and `tip` was written by the operation `keys` names. */
export async function sharesOperation(store: Store, tip: string, anchor: string | null, keys: Set<string>): Promise<boolean> {
  let oid: string | undefined = tip;
  for (let n = 0; oid && oid !== anchor && n < MAX_HISTORY; n++) {
    const obj = await store.reader.read(oid);
    if (!obj || obj.type !== "commit") return false;
    const commit = parseCommit(obj.data);
    const event = eventFromMessage(commit.message);
    const text = obj.data.toString("utf8");
    if (event && keys.has(operationKey(authorOf(text.slice(0, Math.max(0, text.indexOf("\n\n")))), event.at))) return true;
    oid = commit.parents[0];
  }
  return false;
}
