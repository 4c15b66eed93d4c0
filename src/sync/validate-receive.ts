// Validate on receive: a ref fetched from the sync remote enters refs/handoff/ only if what it
// holds is something git-handoff could have written. Records are data from anyone with push access;
// the same pure core operations that decide a local write decide whether each received commit was a
// legal step from its parent's state.
import type { HandoffEvent } from "../core/event.ts";
import { MAX_DURATION_MS } from "../core/duration.ts";
import { authorNameProblem } from "../core/ids.ts";
import { findConflicts } from "../core/lease-ops.ts";
import { newMatchBudget, RECEIVE_MATCH_BUDGET, type MatchBudget } from "../core/match-budget.ts";
import { patternProblem } from "../core/paths.ts";
import { isLeaseLive, type Lease, type LeaseSet } from "../core/lease.ts";
import { isDerivedEvent, replayTaskEvent } from "../core/replay.ts";
import { describeIssues } from "../core/schema-helpers.ts";
import { flatNameProblem, MAX_TASK_FILES } from "../core/task-files.ts";
import { isFinal, type Task } from "../core/task.ts";
import type { AgentRecord } from "../core/agent.ts";
import type { GitObject } from "../git/object-reader.ts";
import { treeEntries, treeIds } from "../git/tree-object.ts";
import { eventFromMessage, parseCommit, type ParsedCommit } from "../store/codec.ts";
import { formatVersionOf, FORMAT_VERSION, placeOf, REF_FAMILIES, type RefFamily } from "../store/ref-families.ts";
import { archiveStepProblem } from "./archive-receive.ts";
import { LEASE_TREE_FORMAT, LEASE_TREE_FORMAT_V2, readLeaseTree } from "../store/lease-tree.ts";
import type { Store } from "../store/store.ts";
import { HISTORY_SKEW_MS } from "../core/clock-skew.ts";
import { canonicalJson } from "../core/canonical-json.ts";

/** How far ahead of this clone's clock a received time may be, and an event behind its parent's. */
export const CLOCK_SKEW_MS = HISTORY_SKEW_MS;
/** New commits replayed per ref and sync; a longer unseen history is judged by its tip. */
const MAX_REPLAY = 5_000;
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

class Refusal extends Error {
  constructor(readonly kind: "invalid" | "newer", reason: string) {
    super(reason);
  }
}

const invalid = (reason: string): never => {
  throw new Refusal("invalid", reason);
};

interface Entry {
  oid: string;
  commit: ParsedCommit;
  author: string;
  event: HandoffEvent | null;
  record: unknown;
}

/**
 * Judges the remote's `tip` of `ref`. `anchor` is the last tip of it this clone validated (null on
 * first sight): a compare-and-swap family must descend from it, and every commit since is checked
 * as an operation on its parent. Without an anchor the tip record and its bounds are checked.
 */
export async function validateReceived(store: Store, ref: string, tip: string, anchor: string | null, now: Date): Promise<Verdict> {
  let current: Entry | null = null;
  // Units of matching (match-budget.ts), not comparisons: one comparison of two costly globs took
  // seconds. However many leases a forged set holds, judging the ref stops at the budget.
  const budget = newMatchBudget(RECEIVE_MATCH_BUDGET);
  const checkStep = (family: RefFamily, id: string | null, e: Entry, parent: Entry | null) => {
    current = e;
    checkStepOf(family, id, e, parent, budget);
  };
  try {
    const place = placeOf(ref);
    if (place.kind === "bad") invalid(`unknown layout: ${place.reason}`);
    if (place.kind === "unknown") throw new Refusal("newer", `family ${JSON.stringify(place.family)} is not known to this build`);
    if (place.kind !== "known") return { ok: true };
    const { family, id } = place;
    const head = await entryAt(store, family, id, tip, now);
    // A task's inputs are written once, with the task (whose "created" step names that commit):
    // a commit on top of them is nobody's inputs.
    if (family.family === "inputs" && head.commit.parents.length) invalid(`commit ${tip.slice(0, 12)} is written over ${head.commit.parents[0]!.slice(0, 12)}: a task's inputs are written once, with the task`);
    if (anchor === tip) return { ok: true };
    if (anchor === null) {
      // The archive seen first: its last append (a long history is not replayed).
      if (family.file === null) await checkArchive(store, family, head, head.commit.parents[0] ?? null, now);
      // First sight: the tip record and its bounds (a long history is not replayed).
      if (family.writers === "owner" && head.author !== id) invalid(`commit ${tip.slice(0, 12)} was written by ${JSON.stringify(head.author)}; only ${id} writes ${ref}`);
      if (family.writers === "cas") checkStep(family, id, head, null);
      // The lease set, exclusivity's one ref, also as the last few operations on their parents:
      // a set written over another without replaying it (an older build's sync) drops others'
      // live leases, and a clone seeing the ref first would grant them again.
      if (family.family === "leases") {
        const window: Entry[] = [head];
        while (window.length <= FIRST_SIGHT_STEPS && window[window.length - 1]!.commit.parents[0]) {
          window.push(await entryAt(store, family, id, window[window.length - 1]!.commit.parents[0]!, now));
        }
        for (let i = window.length - 2; i >= 0; i--) checkStep(family, id, window[i]!, window[i + 1]!);
      }
      return { ok: true };
    }
    // The new commits, newest first, down to the anchor.
    const fresh: Entry[] = [head];
    let reached = false;
    for (let e = head; e.commit.parents[0]; ) {
      if (e.commit.parents[0] === anchor) {
        reached = true;
        break;
      }
      if (fresh.length >= MAX_REPLAY) break;
      e = await entryAt(store, family, id, e.commit.parents[0], now);
      fresh.push(e);
    }
    if (family.writers === "owner") {
      // A heartbeat may replace its parent, so the line need not reach the anchor: authors must match.
      for (const e of fresh) if (e.author !== id) invalid(`commit ${e.oid.slice(0, 12)} was written by ${JSON.stringify(e.author)}; only ${id} writes ${ref}`);
      return { ok: true };
    }
    if (!reached) invalid(`rewritten history: the remote's ${tip.slice(0, 12)} does not descend from ${anchor.slice(0, 12)}, the last state validated here`);
    // The anchor was judged here already, under the bounds of the build that did: a pattern an
    // older build let in is compared within the budget, not refused again at every sync.
    let parent = await entryAt(store, family, id, anchor, now, false);
    for (let i = fresh.length - 1; i >= 0; i--) {
      if (family.writers === "cas") checkStep(family, id, fresh[i]!, parent);
      if (family.file === null) await checkArchive(store, family, fresh[i]!, parent.oid, now);
      parent = fresh[i]!;
    }
    return { ok: true };
  } catch (err) {
    const at = current as Entry | null;
    const operation = at?.event ? operationKey(at.author, at.event.at) : undefined;
    if (err instanceof Refusal) return { ok: false, kind: err.kind, reason: err.message, ...(operation ? { operation } : {}) };
    return { ok: false, kind: "invalid", reason: (err as Error).message };
  }
}

/** An archive commit is an append as compaction writes it (archive-receive.ts). */
async function checkArchive(store: Store, archive: RefFamily, e: Entry, parentOid: string | null, now: Date): Promise<void> {
  const tasks = REF_FAMILIES.find((f) => f.family === "tasks")!;
  const parent = parentOid ? { oid: parentOid, commit: (await entryAt(store, archive, null, parentOid, now)).commit } : null;
  const problem = await archiveStepProblem(store, e, parent, async (id, oid) => (await entryAt(store, tasks, id, oid, now)).record as Task);
  if (problem) invalid(problem);
}

function authorOf(header: string): string {
  const line = header.split("\n").find((l) => l.startsWith("author ")) ?? "";
  const lt = line.indexOf(" <");
  return lt > 0 ? line.slice(7, lt) : "";
}

/**
 * Reads an object from another clone once its size is known to be within `max`; past it, refused
 * as `tooBig` says, unread (a 300 MB task.json took 650 MB of memory to refuse when read first).
 */
async function readWithin(store: Store, oid: string, max: number, tooBig: (size: number) => string): Promise<GitObject | null> {
  const info = await store.reader.info(oid);
  if (info && info.size > max) invalid(tooBig(info.size));
  const obj = await store.reader.read(oid);
  // Measured again as read: an object whose header could not be read on its own is still bounded.
  if (obj && obj.data.length > max) invalid(tooBig(obj.data.length));
  return obj;
}

/** The most bytes a tree of `entries` entries can take (mode, a 255-byte name, a 32-byte id), never under 1 MB. */
const treeBytes = (entries: number) => Math.max(1024 * 1024, entries * 300);

/** One commit's structure, bounds and record, checked on its own. */
async function entryAt(store: Store, family: RefFamily, id: string | null, oid: string, now: Date, bounded = true): Promise<Entry> {
  const obj = await readWithin(store, oid, family.bounds.commit, (size) => `commit ${oid.slice(0, 12)} is ${size} bytes; at most ${family.bounds.commit} for ${family.family}`);
  if (!obj) invalid(`object ${oid.slice(0, 12)} is missing`);
  if (obj!.type !== "commit") invalid(`${oid.slice(0, 12)} is a ${obj!.type}, not a commit`);
  const data = obj!.data;
  const commit = parseCommit(data);
  const text = data.toString("utf8");
  const author = authorOf(text.slice(0, Math.max(0, text.indexOf("\n\n"))));
  const authorProblem = authorNameProblem(author);
  if (authorProblem) invalid(`the author of ${oid.slice(0, 12)} ${authorProblem}`);
  const treeObj = await readWithin(store, commit.tree, treeBytes(family.bounds.treeEntries), (size) => `tree of ${oid.slice(0, 12)} is ${size} bytes; at most ${treeBytes(family.bounds.treeEntries)} for ${family.family}`);
  if (!treeObj || treeObj.type !== "tree") invalid(`commit ${oid.slice(0, 12)} has no tree`);
  const tree = treeIds(treeObj!.data, store.oidBytes) ?? invalid(`the tree of ${oid.slice(0, 12)} is not well formed`);
  if (tree.size > family.bounds.treeEntries) invalid(`tree of ${oid.slice(0, 12)} has ${tree.size} entries; at most ${family.bounds.treeEntries} for ${family.family}`);
  const formatOid = tree.get("format");
  const markerInfo = formatOid ? await store.reader.info(formatOid) : null;
  const marker = markerInfo && markerInfo.type === "blob" && markerInfo.size < 64 ? await store.reader.read(formatOid!) : null;
  const version = marker && marker.type === "blob" && marker.data.length < 64 ? formatVersionOf(marker.data.toString("utf8")) : null;
  if (version === null) invalid(`commit ${oid.slice(0, 12)} has no git-handoff format marker`);
  if (version! > family.format) throw new Refusal("newer", `record format ${version} (this build reads ${family.format === FORMAT_VERSION ? family.format : `up to ${family.format}`})`);
  if (family.family === "leases" && (version === LEASE_TREE_FORMAT || version === LEASE_TREE_FORMAT_V2)) return leaseTreeEntry(store, family, oid, commit, author, now, bounded);
  if (family.file === null) {
    for (const name of tree.keys()) if (name !== "format" && !/^[A-Za-z0-9][A-Za-z0-9._@+-]*\.json$/.test(name)) invalid(`unexpected entry ${JSON.stringify(name.slice(0, 80))} in ${family.family}`);
    return { oid, commit, author, event: null, record: null };
  }
  for (const name of tree.keys()) {
    if (name === "format" || name === family.file) continue;
    if (family.folders?.includes(name)) {
      const sub = await readWithin(store, tree.get(name)!, treeBytes(MAX_TASK_FILES), (size) => `${name}/ in ${oid.slice(0, 12)} is a tree of ${size} bytes; at most ${treeBytes(MAX_TASK_FILES)}`);
      if (!sub || sub.type !== "tree") invalid(`${name} in ${oid.slice(0, 12)} is not a folder`);
      // Files from another machine: flat names only, bounded in number (their sizes are checked where read).
      const files = treeEntries(sub!.data, store.oidBytes);
      if (!files) invalid(`${name}/ in ${oid.slice(0, 12)} is not a well formed tree`);
      if (files!.length > MAX_TASK_FILES) invalid(`holds ${files!.length} files in ${name}/; at most ${MAX_TASK_FILES}`);
      for (const f of files!) {
        const problem = flatNameProblem(f.name);
        if (problem) invalid(`holds a file ${JSON.stringify(f.name.slice(0, 80))} that ${problem}`);
        if (f.mode !== "100644") invalid(`holds ${JSON.stringify(f.name.slice(0, 80))} in ${name}/ that is not a plain file`);
      }
      continue;
    }
    invalid(`unexpected entry ${JSON.stringify(name.slice(0, 80))} beside ${family.file}`);
  }
  const blobOid = tree.get(family.file);
  if (!blobOid) invalid(`commit ${oid.slice(0, 12)} holds no ${family.file}`);
  const blob = await readWithin(store, blobOid!, family.bounds.blob, (size) => `${family.file} is ${size} bytes; at most ${family.bounds.blob}`);
  if (!blob || blob.type !== "blob") invalid(`${family.file} of ${oid.slice(0, 12)} is not a file`);
  if (family.checkRaw) {
    const problem = family.checkRaw(blob!.data);
    if (problem) invalid(`${family.file} of ${oid.slice(0, 12)} ${problem}`);
    const rawEvent = eventFromMessage(commit.message);
    if (rawEvent && Date.parse(rawEvent.at) > now.getTime() + CLOCK_SKEW_MS) invalid(`event time ${rawEvent.at} is ahead of this clock by more than ${CLOCK_SKEW_MS / 60_000}m`);
    return { oid, commit, author, event: rawEvent, record: null };
  }
  let json: unknown;
  try {
    json = JSON.parse(blob!.data.toString("utf8"));
  } catch {
    invalid(`${family.file} of ${oid.slice(0, 12)} is not JSON`);
  }
  const parsed = family.schema!.safeParse(json);
  if (!parsed.success) invalid(`${family.file} of ${oid.slice(0, 12)} fails the schema: ${describeIssues(parsed.error)}`);
  const record = parsed.data;
  if (id !== null && family.idOf && family.idOf(record) !== id) invalid(`the record names ${JSON.stringify(String(family.idOf(record)).slice(0, 80))}, the ref ${id}`);
  const recordProblem = family.checkRecord?.(record);
  if (recordProblem) invalid(`${family.file} of ${oid.slice(0, 12)}: ${recordProblem}`);
  const event = eventFromMessage(commit.message);
  if (event && Date.parse(event.at) > now.getTime() + CLOCK_SKEW_MS) invalid(`event time ${event.at} is ahead of this clock by more than ${CLOCK_SKEW_MS / 60_000}m`);
  checkExpiries(family, record, now);
  if (bounded) checkPatterns(family, record);
  return { oid, commit, author, event, record };
}

/** A lease set stored as a tree (lease-tree.ts): the same checks as its one-file form. */
async function leaseTreeEntry(store: Store, family: RefFamily, oid: string, commit: ParsedCommit, author: string, now: Date, bounded: boolean): Promise<Entry> {
  let record: LeaseSet;
  try {
    record = (await readLeaseTree(store.reader, store.oidBytes, oid, `commit ${oid.slice(0, 12)}`, null, family.bounds)).set;
  } catch (e) {
    invalid((e as Error).message);
  }
  const event = eventFromMessage(commit.message);
  if (event && Date.parse(event.at) > now.getTime() + CLOCK_SKEW_MS) invalid(`event time ${event.at} is ahead of this clock by more than ${CLOCK_SKEW_MS / 60_000}m`);
  checkExpiries(family, record!, now);
  if (bounded) checkPatterns(family, record!);
  return { oid, commit, author, event, record: record! };
}

/** Lease patterns, task scopes and planned files as a local write bounds them (paths.ts patternProblem): each costs little to compare. */
function checkPatterns(family: RefFamily, record: unknown): void {
  const patterns =
    family.family === "leases" ? (record as LeaseSet).leases.map((l) => l.pattern) : family.family === "tasks" ? (record as Task).scope : family.family === "agents" ? (record as AgentRecord).files : [];
  for (const p of patterns) {
    const problem = patternProblem(p);
    if (problem) invalid(`the pattern ${JSON.stringify(p.slice(0, 80))}${p.length > 80 ? "…" : ""} ${problem}`);
  }
}

/** No claim or lease runs further ahead than the longest TTL anyone may ask for. */
function checkExpiries(family: RefFamily, record: unknown, now: Date): void {
  const limit = now.getTime() + MAX_DURATION_MS + CLOCK_SKEW_MS;
  const expiries: string[] = [];
  if (family.family === "tasks") {
    const t = record as Task;
    if (t.claim) expiries.push(t.claim.expires_at);
    if (t.claim && t.claim.fence > t.fence) invalid(`claim fence ${t.claim.fence} is above the task's fence ${t.fence}`);
    if (Date.parse(t.updated_at) > now.getTime() + CLOCK_SKEW_MS) invalid(`updated_at ${t.updated_at} is in the future`);
  }
  if (family.family === "leases") for (const l of (record as LeaseSet).leases) expiries.push(l.expires_at);
  for (const at of expiries) if (Date.parse(at) > limit) invalid(`expiry ${at} is further ahead than the longest allowed TTL`);
}

const REPLAYED = new Set(["claimed", "renewed", "released", "done", "failed", "cancelled", "reclaimed"]);

/** Who holds what, as far as exclusivity is concerned: what a step may change only legally. */
function holding(t: Task): string {
  return JSON.stringify([t.status, t.claim?.agent ?? null, t.claim?.fence ?? null, t.claim?.expires_at ?? null, t.fence]);
}

/**
 * Whether `rec`'s claim is `prev`'s live claim renewed by its holder: the same claim in every
 * field but its expiry, which moves at most one TTL past the event (as renewTask makes it).
 */
function holderRenewal(prev: Task, rec: Task, actor: string, at: number): boolean {
  const a = prev.claim;
  const b = rec.claim;
  if (!a || !b || a.agent !== actor || Date.parse(a.expires_at) <= at) return false;
  if (canonicalJson({ ...b, expires_at: a.expires_at }) !== canonicalJson(a)) return false;
  return Date.parse(b.expires_at) <= at + a.ttl_ms + CLOCK_SKEW_MS;
}

/** A compare-and-swap family's commit is a legal operation from its parent's state. */
function checkStepOf(family: RefFamily, id: string | null, e: Entry, parent: Entry | null, budget: MatchBudget): void {
  const at = e.event ? Date.parse(e.event.at) : NaN;
  if (!e.event) invalid(`commit ${e.oid.slice(0, 12)} carries no event`);
  const ev = e.event!;
  const actor = ev.by ?? ev.agent;
  if (e.author !== actor) invalid(`commit ${e.oid.slice(0, 12)} is authored by ${JSON.stringify(e.author)} but its event is by ${JSON.stringify(actor)}`);
  // Clones' clocks differ by a little: two writes in quick succession from two machines may come
  // out of order by that much (the lease set, every agent's, most of all). More is a wrong clock.
  if (parent?.event && at < Date.parse(parent.event.at) - CLOCK_SKEW_MS) invalid(`event time ${ev.at} is before its parent's (${parent.event.at}) by more than ${CLOCK_SKEW_MS / 60_000} minutes`);
  if (family.family === "tasks") {
    const rec = e.record as Task;
    if (ev.task !== id) invalid(`the event is about ${JSON.stringify(ev.task)}, the ref about ${id}`);
    if (!parent) return; // a task's first commit: checked as a record above
    const prev = parent.record as Task;
    if (ev.type === "created") invalid(`a second "created" on ${id}`);
    // A finished task stays as its completion left it: the results commit that completion names is
    // the task's result for every reader (work/handover.ts loadResults), so no later step may
    // reopen the task or name another one.
    if (isFinal(prev.status) && (rec.status !== prev.status || canonicalJson(rec.result) !== canonicalJson(prev.result))) {
      invalid(`${ev.type} by ${actor} changed ${id} after it was ${prev.status}`);
    }
    if (rec.fence < prev.fence) invalid(`the fence went down from ${prev.fence} to ${rec.fence}`);
    if (ev.type === "expired") {
      if (!prev.claim || Date.parse(prev.claim.expires_at) > at || rec.claim !== null || rec.fence !== prev.fence) invalid(`an "expired" by ${actor} on a claim that had not run out`);
      return;
    }
    if (isDerivedEvent(ev, parent.event, prev)) {
      if (rec.claim !== null || rec.status !== "failed") invalid(`a derived "failed" that does not fail the task`);
      return;
    }
    if (REPLAYED.has(ev.type)) {
      const out = replayTaskEvent(prev, ev, rec, { asMade: true });
      if (!out.ok) invalid(`${ev.type} by ${actor} was not a legal operation: ${out.refusal.message}`);
      if (out.ok && holding(out.record) !== holding(rec)) invalid(`${ev.type} by ${actor} recorded a state the operation does not produce`);
      // The results commit a completion names is the one its event names: the holder's, at its fence.
      if (out.ok && (out.record.result?.results ?? null) !== (rec.result?.results ?? null)) invalid(`${ev.type} by ${actor} records results its event does not name`);
      return;
    }
    // Every other operation (handoffs, dependencies, review) may end a claim, never grant one; the
    // holder's own may renew its live claim (a handoff counts as an update by the holder).
    if (rec.fence !== prev.fence || (rec.claim !== null && canonicalJson(rec.claim) !== canonicalJson(prev.claim) && !holderRenewal(prev, rec, actor, at))) {
      invalid(`${ev.type} by ${actor} changed who holds ${id}`);
    }
    // Who a reclaim took the task from may not finish it until a new grant (a higher fence) ends
    // the rule: a writer that does not know the field (an older build) drops it, and with it the rule.
    if (prev.reclaimed && canonicalJson(rec.reclaimed ?? null) !== canonicalJson(prev.reclaimed)) {
      invalid(`${ev.type} by ${actor} dropped the record that ${prev.reclaimed.by} reclaimed ${id} from ${prev.reclaimed.agent}`);
    }
    return;
  }
  if (family.family === "leases" && parent) {
    const now = new Date(at);
    const before = (parent.record as LeaseSet).leases;
    const seen = new Set(before.map((l) => JSON.stringify(l)));
    // Read once for every new lease: the leases near each one are looked up in it (lease-groups.ts).
    const others = before.filter((o: Lease) => o.agent !== actor && isLeaseLive(o, now));
    const after = (e.record as LeaseSet).leases;
    for (const l of after) {
      if (seen.has(JSON.stringify(l))) continue;
      if (l.agent !== actor) invalid(`${actor} wrote a lease of ${l.agent} on ${JSON.stringify(l.pattern)}`);
      const found = findConflicts(others, actor, [l.pattern], l.exclusive, now, 0, budget);
      const clash = found.conflicts[0];
      if (!clash && found.unchecked.length) {
        const u = found.unchecked[0]!.lease;
        invalid(`${actor}'s lease on ${JSON.stringify(l.pattern.slice(0, 80))} is too costly to check against the live leases: comparing it with ${u.agent}'s lease on ${JSON.stringify(u.pattern.slice(0, 80))} went past the budget of glob matching one received ref may do (${RECEIVE_MATCH_BUDGET.toLocaleString("en")} units)`);
      }
      if (clash) invalid(`${actor}'s ${l.exclusive ? "exclusive " : ""}lease on ${JSON.stringify(l.pattern)} overlaps ${clash.lease.agent}'s live lease on ${JSON.stringify(clash.lease.pattern)}`);
    }
    // Another agent's live lease may end only by an operation that ends it: its task's (released,
    // finished, taken over), a forced release naming it, or the sweep of a silent agent. A set
    // written over another without replaying it (an older build's sync did) dropped live leases of
    // others, and the next clone granted an exclusive lease on what another agent still held.
    const kept = new Set(after.map((l) => leaseKey(l)));
    for (const l of others) {
      if (kept.has(leaseKey(l)) || mayEnd(ev, l)) continue;
      invalid(`${ev.type} by ${actor} removed ${l.agent}'s live lease on ${JSON.stringify(l.pattern)}`);
    }
  }
}

/** A lease as who holds what for which task: a renewal keeps it, an end removes it. */
function leaseKey(l: Lease): string {
  return JSON.stringify([l.agent, l.pattern, l.task, l.exclusive]);
}

/** Whether event `ev` is one that may end `l`, another agent's live lease. */
function mayEnd(ev: HandoffEvent, l: Lease): boolean {
  if (ev.type === "unleased") return (!!ev.task && l.task === ev.task) || (!ev.task && ev.holder === l.agent);
  if (ev.type === "lease_reclaimed") return (ev.paths ?? []).includes(l.pattern) && (ev.holder ?? "").split(", ").includes(l.agent);
  return false;
}

/** Whether a commit between `anchor` and `tip` was written by the operation `keys` names. */
export async function sharesOperation(store: Store, tip: string, anchor: string | null, keys: Set<string>): Promise<boolean> {
  let oid: string | undefined = tip;
  for (let n = 0; oid && oid !== anchor && n < MAX_REPLAY; n++) {
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
