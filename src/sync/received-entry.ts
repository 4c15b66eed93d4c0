// One received commit, read with the bounds its family allows and checked on its own: structure,
// author, format marker, record schema, id = ref name, times and expiries, patterns. Objects from
// another clone are measured before they are read, so a huge forged object is refused unread.
// Whether the commit was a legal step from its parent is judged elsewhere (task-receive.ts,
// lease-receive.ts, loop-receive.ts), on the entries read here.
import type { HandoffEvent } from "../core/event.ts";
import { MAX_DURATION_MS } from "../core/duration.ts";
import { authorNameProblem } from "../core/ids.ts";
import { patternProblem } from "../core/paths.ts";
import type { LeaseSet } from "../core/lease.ts";
import { describeIssues } from "../core/schema-helpers.ts";
import { flatNameProblem, MAX_TASK_FILES } from "../core/task-files.ts";
import type { Task } from "../core/task.ts";
import type { AgentRecord } from "../core/agent.ts";
import type { GitObject } from "../git/object-reader.ts";
import { treeEntries, treeIds } from "../git/tree-object.ts";
import { eventFromMessage, parseCommit, type ParsedCommit } from "../store/codec.ts";
import { formatVersionOf, FORMAT_VERSION, type RefFamily } from "../store/ref-families.ts";
import { readLeaseTree } from "../store/lease-tree.ts";
import { LEASE_TREE_FORMAT, LEASE_TREE_FORMAT_V2 } from "../store/lease-tree-format.ts";
import type { Store } from "../store/store.ts";
import { CLOCK_SKEW_MS, invalid, Refusal } from "./receive-refusal.ts";

export interface Entry {
  oid: string;
  commit: ParsedCommit;
  author: string;
  event: HandoffEvent | null;
  record: unknown;
}

export function authorOf(header: string): string {
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

/** The object `oid` names, read within the bounds of a commit of `family` (null: missing). */
export function readCommitWithin(store: Store, family: RefFamily, oid: string): Promise<GitObject | null> {
  return readWithin(store, oid, family.bounds.commit, (size) => `commit ${oid.slice(0, 12)} is ${size} bytes; at most ${family.bounds.commit} for ${family.family}`);
}

/** The most bytes a tree of `entries` entries can take (mode, a 255-byte name, a 32-byte id), never under 1 MB. */
const treeBytes = (entries: number) => Math.max(1024 * 1024, entries * 300);

/** One commit's structure, bounds and record, checked on its own. */
export async function entryAt(store: Store, family: RefFamily, id: string | null, oid: string, now: Date, read?: GitObject | null): Promise<Entry> {
  const obj = read ?? (await readCommitWithin(store, family, oid));
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
  if (family.family === "leases" && (version === LEASE_TREE_FORMAT || version === LEASE_TREE_FORMAT_V2)) return leaseTreeEntry(store, family, oid, commit, author, now);
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
  checkPatterns(family, record);
  return { oid, commit, author, event, record };
}

/** A lease set stored as a tree (lease-tree.ts): the same checks as its one-file form. */
async function leaseTreeEntry(store: Store, family: RefFamily, oid: string, commit: ParsedCommit, author: string, now: Date): Promise<Entry> {
  let record: LeaseSet;
  try {
    record = (await readLeaseTree(store.reader, store.oidBytes, oid, `commit ${oid.slice(0, 12)}`, null, family.bounds)).set;
  } catch (e) {
    invalid((e as Error).message);
  }
  const event = eventFromMessage(commit.message);
  if (event && Date.parse(event.at) > now.getTime() + CLOCK_SKEW_MS) invalid(`event time ${event.at} is ahead of this clock by more than ${CLOCK_SKEW_MS / 60_000}m`);
  checkExpiries(family, record!, now);
  checkPatterns(family, record!);
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
