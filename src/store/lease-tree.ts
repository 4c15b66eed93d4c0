// The lease set as a tree (record format 3): the leases filed under `leases/` by the folder their
// pattern starts in, a folder of many leases spread over several files by a hash of each pattern
// (`src~16~5.json`), so a write rewrites one file of about FILE_LEASES leases plus two small trees,
// whatever the number of leases elsewhere or in the same folder. Exclusivity is untouched: the
// whole set still lives under the one ref refs/handoff/leases and every change is one
// compare-and-swap of it. Format 2 (one file per first folder, read still) made every claim in a
// repository whose code is all under src/ rewrite one file of every lease.
//
// A small set stays one `leases.json` (format 1, which every version reads): below
// LEASE_TREE_AT leases the single file is cheaper to read and write than a tree. The first write
// that finds the set at that size converts it, and from then on it stays a tree, so a clone never
// flips between formats. A build that knows only format 1 refuses a format 2 record on receive
// ("from a newer git-handoff") instead of reading it as corrupt or empty; a format 2 build reading
// a format 3 record says the same (its marker is not format 2's).
import { createHash } from "node:crypto";
import { fail } from "../core/errors.ts";
import type { HandoffEvent } from "../core/event.ts";
import { LeaseSet, type Lease } from "../core/lease.ts";
import { describeIssues } from "../core/schema-helpers.ts";
import { isInLeaseOrder, keepOrder, sortLeases, withLeases } from "../core/lease-order.ts";
import type { ObjectReader } from "../git/object-reader.ts";
import type { ObjectWriter } from "../git/object-writer.ts";
import { encodeTree, treeEntries, type TreeEntry } from "../git/tree-object.ts";
import { commitObject, eventMessage, parseCommit, readTyped } from "./codec.ts";
import { leaseGroups, leaseKey, listStep, repartition } from "../core/lease-groups.ts";
import { fnv1a32 } from "../core/fnv.ts";
import { diffFolder, folderBytes, type FolderBytes, type FolderChange } from "./lease-folder-diff.ts";
import { LEASE_FOLDER, LEASE_TREE_FORMAT, LEASE_TREE_FORMAT_V2 } from "./lease-tree-format.ts";

export const LEASE_TREE_MARKER = `git-handoff ${LEASE_TREE_FORMAT}\n`;
/** Leases a prefix file holds before its folder's leases are spread over more files (format 3). */
export const FILE_LEASES = 32;
/** The most files one folder's leases are spread over. */
export const MAX_BUCKETS = 512;
/** Prefix files one format 2 record may hold (a received tree is refused beyond it). */
export const MAX_LEASE_FILES = 20_000;

/** A prefix file of a format 2 tree: its blob and the leases it holds (shared, never mutated). */
export interface LeaseGroup {
  oid: string;
  leases: readonly Lease[];
}

/**
 * A folder's name as a file name part: escaped so that no name is `.`, `..`, empty or holds a
 * slash. Kept, since every write names every folder of the set.
 */
function escapedFolder(key: string): string {
  return remembered(folders, key, (k) => encodeURIComponent(k).replace(/\./g, "%2E"));
}

const folders = new Map<string, string>();

/** `make(key)`, kept in `memo`: names a set uses again at every write and read (emptied past a bound). */
function remembered<V>(memo: Map<string, V>, key: string, make: (key: string) => V): V {
  let value = memo.get(key);
  if (value === undefined) {
    value = make(key);
    if (memo.size >= 50_000) memo.clear();
    memo.set(key, value);
  }
  return value;
}

/** Format 2's file name of a prefix (read only: writes are format 3). */
export function groupFile(key: string): string {
  return `${escapedFolder(key)}.json`;
}

/**
 * Format 3's file for a folder's leases, or for bucket `b` of `buckets` of them: the folder's name
 * escaped as in format 2 and `~` too, so that `~` only ever separates the bucket count and the
 * bucket (`src~8~3.json`).
 */
export function bucketFile(key: string, buckets: number, b: number): string {
  const escaped = escapedFolder(key);
  const folder = escaped.includes("~") ? escaped.replace(/~/g, "%7E") : escaped;
  return buckets === 1 ? `${folder}.json` : `${folder}~${buckets}~${b}.json`;
}

/** Which of `buckets` files a pattern goes to: a hash of its text, so a write changes one of them. */
export function bucketOf(pattern: string, buckets: number): number {
  return buckets === 1 ? 0 : fnv1a32(pattern) % buckets;
}

/** bucketOf for a lease, its hash kept by lease object (leases are never mutated; a set shares most of its leases with the one before). */
function leaseBucket(l: Lease, buckets: number): number {
  let h = hashes.get(l);
  if (h === undefined) hashes.set(l, (h = fnv1a32(l.pattern)));
  return h % buckets;
}

const hashes = new WeakMap<Lease, number>();

/** A format 3 file name read back: its folder part (escaped) and its bucket, or null if it is not one a writer makes. */
function parseBucketFile(name: string): { folder: string; buckets: number; b: number } | null {
  const m = /^([^~]+)(?:~([1-9][0-9]*)~(0|[1-9][0-9]*))?\.json$/.exec(name);
  if (!m) return null;
  if (m[2] === undefined) return { folder: m[1]!, buckets: 1, b: 0 };
  const buckets = Number(m[2]);
  const b = Number(m[3]);
  // A power of two above one, within the bound, and a bucket below it.
  if (buckets < 2 || buckets > MAX_BUCKETS || (buckets & (buckets - 1)) !== 0 || b >= buckets) return null;
  return { folder: m[1]!, buckets, b };
}

/**
 * How many files a folder of `n` leases is spread over: a power of two giving about FILE_LEASES
 * each. The count it had (`had`) is kept while its files hold between a quarter and twice that,
 * so a folder whose leases come and go around a boundary does not have all its files rewritten
 * each time.
 */
export function bucketsFor(n: number, had: number | undefined): number {
  if (had !== undefined && n <= had * FILE_LEASES * 2 && (had === 1 || n * 4 >= had * FILE_LEASES)) return had;
  let b = 1;
  while (b * FILE_LEASES < n && b < MAX_BUCKETS) b *= 2;
  return b;
}

/** The folder's lease array split over its buckets (each bucket that holds any), kept by array identity (a write re-splits only the folders it changed). */
const splits = new WeakMap<readonly Lease[], { buckets: number; parts: Map<number, Lease[]> }>();

/**
 * Format 3's files of a lease set, by file name, each holding its leases in the set's order.
 * `had`: the bucket count of each folder spread over several files in the record written before
 * (kept while it fits; any other folder had one file); `force`: take those counts as they are
 * (reading back the files of a stored record).
 */
export function fileLeases(leases: readonly Lease[], had: ReadonlyMap<string, number> | null, force = false): Map<string, readonly Lease[]> {
  return filed(leases, had, force).files;
}

/** fileLeases, with the bucket counts of the folders it spread (those of one file are left out). */
function filed(leases: readonly Lease[], had: ReadonlyMap<string, number> | null, force: boolean): { files: Map<string, readonly Lease[]>; counts: Map<string, number> } {
  const out = new Map<string, readonly Lease[]>();
  const counts = new Map<string, number>();
  for (const [key, list] of leaseGroups(leases)) {
    // A folder not among the spread ones had one file.
    const was = had?.get(key) ?? 1;
    const buckets = force ? was : bucketsFor(list.length, was);
    if (buckets !== 1) counts.set(key, buckets);
    if (buckets === 1) {
      out.set(bucketFile(key, 1, 0), list);
      continue;
    }
    let split = splits.get(list);
    if (!split || split.buckets !== buckets) {
      let parts = patchedSplit(list, buckets);
      if (!parts) {
        parts = new Map();
        for (const l of list) {
          const b = leaseBucket(l, buckets);
          const part = parts.get(b);
          if (part) part.push(l);
          else parts.set(b, [l]);
        }
      }
      splits.set(list, (split = { buckets, parts }));
    }
    for (const [b, part] of split.parts) out.set(bucketFile(key, buckets, b), part);
  }
  return { files: out, counts };
}

/**
 * A folder's split when its list was patched from one split into as many buckets before
 * (lease-groups.ts listStep): the buckets its leases left or joined built again, the others the
 * very arrays before (so the writer keeps their blobs without comparing them). A folder of 1,000
 * leases under src/ was split afresh at every write. Null when there is nothing to patch from.
 */
function patchedSplit(list: readonly Lease[], buckets: number): Map<number, Lease[]> | null {
  const step = listStep(list);
  const before = step && splits.get(step.from);
  if (!before || before.buckets !== buckets) return null;
  return repartition(before.parts, step.gone, step.added, (l) => leaseBucket(l, buckets));
}

/**
 * Each spread folder's bucket count in a record's files (by file name): the counts its writer
 * used (carried from write to write), else read from the names (a record read from git).
 */
const countsOf = new WeakMap<ReadonlyMap<string, LeaseGroup>, ReadonlyMap<string, number>>();
function bucketCounts(files: ReadonlyMap<string, LeaseGroup>): ReadonlyMap<string, number> {
  let counts = countsOf.get(files);
  if (!counts) {
    const found = new Map<string, number>();
    for (const [name, g] of files) {
      if (!name.includes("~")) continue; // one file: the count is 1
      const parsed = parseBucketFile(name);
      if (parsed && g.leases.length) found.set(leaseKey(g.leases[0]!), parsed.buckets);
    }
    countsOf.set(files, (counts = found));
  }
  return counts;
}

function serializeGroup(leases: readonly Lease[]): string {
  return `{"leases": [\n${leases.map((l) => JSON.stringify(l)).join(",\n")}\n]}\n`;
}

function sameLeases(a: readonly Lease[], b: readonly Lease[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The id of a tree format's marker blob (`git-handoff <format>`), this build's by default. */
export function treeMarkerOid(oidBytes: number, format = LEASE_TREE_FORMAT): string {
  const at = `${oidBytes}:${format}`;
  const known = markerOids.get(at);
  if (known) return known;
  const body = Buffer.from(`git-handoff ${format}\n`, "utf8");
  const oid = createHash(oidBytes === 32 ? "sha256" : "sha1").update(`blob ${body.length}\0`).update(body).digest("hex");
  markerOids.set(at, oid);
  return oid;
}

const markerOids = new Map<string, string>();

/**
 * The `leases/` folder's tree: file entries only, so git's order is plain name order. Each
 * entry's bytes are kept by prefix file (a write changes one or two of a hundred and keeps the
 * others' objects), and the order of the names by the map of files it was taken from: a write
 * takes its order from the one before (`before`), with the names it adds merged in.
 */
function encodeFolder(groups: Map<string, LeaseGroup>, before: ReadonlyMap<string, LeaseGroup> | null): Buffer {
  const prev = before ? folderOrder.get(before) : undefined;
  let keys: string[];
  if (!prev) keys = [...groups.keys()].sort(byFileName);
  else {
    // A claim adds a prefix file or two and a release drops some: the order before, merged with
    // the few new names, not a sort of every name again (900 of them per claim with 900 leases).
    const added: string[] = [];
    for (const k of groups.keys()) if (!before!.has(k)) added.push(k);
    if (!added.length && before!.size === groups.size) keys = prev;
    else {
      added.sort(byFileName);
      keys = [];
      let j = 0;
      for (const k of prev) {
        if (!groups.has(k)) continue;
        while (j < added.length && byFileName(added[j]!, k) < 0) keys.push(added[j++]!);
        keys.push(k);
      }
      while (j < added.length) keys.push(added[j++]!);
    }
  }
  folderOrder.set(groups, keys);
  const parts: Buffer[] = [];
  const lengths: number[] = [];
  for (const key of keys) {
    const g = groups.get(key)!;
    let entry = entryBytes.get(g);
    if (!entry) {
      entry = Buffer.concat([Buffer.from(`100644 ${key}\0`, "utf8"), Buffer.from(g.oid, "hex")]);
      entryBytes.set(g, entry);
    }
    parts.push(entry);
    lengths.push(entry.length);
  }
  const data = Buffer.concat(parts);
  folders3.set(groups, folderBytes(data, keys, lengths));
  return data;
}

/** File names in git's order of a folder's file entries (byte order: the names are ASCII). */
function byFileName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** By map of prefix files: its file names in order. */
const folderOrder = new WeakMap<ReadonlyMap<string, LeaseGroup>, string[]>();
/** By prefix file (a group object keeps its key and its blob): its tree entry's bytes. */
const entryBytes = new WeakMap<LeaseGroup, Buffer>();
/**
 * By map of format 3 prefix files: its folder tree's bytes, names in git's order and where each
 * entry starts (written here, or read and found in order), for the next tip's diff.
 */
const folders3 = new WeakMap<ReadonlyMap<string, LeaseGroup>, FolderBytes>();
/** Maps of prefix files a read made from the one before by a diff of the folder's bytes (tests ask). */
const diffed = new WeakSet<ReadonlyMap<string, LeaseGroup>>();

/** Whether a read took these prefix files from the set before by a diff of the folder's bytes. */
export function readByDiff(groups: ReadonlyMap<string, LeaseGroup>): boolean {
  return diffed.has(groups);
}

/**
 * Writes one commit per step, each a format 2 tree. A prefix file whose leases are the very
 * objects it held before (core operations keep unchanged leases as they are) is not written
 * again: its blob is reused. Returns the new tip and the prefix files of each commit.
 */
export function writeLeaseTree(
  writer: ObjectWriter,
  parent: string | null,
  before: Map<string, LeaseGroup> | null,
  steps: { event: HandoffEvent; record: LeaseSet }[],
): { tip: string; groups: Map<string, LeaseGroup> } {
  const marker = writer.write("blob", LEASE_TREE_MARKER);
  let tip = parent;
  let groups = before ?? new Map<string, LeaseGroup>();
  for (const step of steps) {
    const next = new Map<string, LeaseGroup>();
    const { files, counts } = filed(step.record.leases, bucketCounts(groups), false);
    for (const [name, leases] of files) {
      const old = groups.get(name);
      next.set(name, old && sameLeases(old.leases, leases) ? old : { oid: writer.write("blob", serializeGroup(leases)), leases });
    }
    countsOf.set(next, counts);
    const folder = writer.write("tree", encodeFolder(next, groups));
    const tree = writer.write("tree", encodeTree([{ mode: "100644", name: "format", oid: marker }, { mode: "40000", name: LEASE_FOLDER, oid: folder }]));
    tip = writer.write("commit", commitObject({ tree, parent: tip, author: step.event.by ?? step.event.agent, at: new Date(step.event.at), message: eventMessage(step.event) }));
    groups = next;
  }
  return { tip: tip!, groups };
}

/**
 * The prefix files of the format 2 record at `tip` for a set already read (from the cache file of
 * a one-shot process): each file's blob id from the stored tree, its leases the set's leases of
 * its key (the very objects, so a write that keeps them keeps the blob instead of serializing and
 * hashing every file again: an agent's auto-lease at 500 leases spent tens of ms on that). Null
 * when the tree's files are not exactly the set's keys; a writer then writes every file, as
 * before.
 */
export async function groupsAt(reader: ObjectReader, oidBytes: number, tip: string, ref: string, set: LeaseSet): Promise<Map<string, LeaseGroup> | null> {
  const commit = parseCommit(await readTyped(reader, tip, "commit", ref));
  const folder = parseEntries(await readTyped(reader, commit.tree, "tree", ref), oidBytes, ref).find((e) => e.name === LEASE_FOLDER && e.mode === "40000");
  if (!folder) return null;
  const entries = plainFiles(await readTyped(reader, folder.oid, "tree", ref), oidBytes);
  if (!entries) return null;
  const files = new Map(entries.map((e) => [e.name, e.oid]));
  // Each folder's bucket count as the stored names say (a format 2 record: one file each).
  const counts = new Map<string, number>();
  for (const name of files.keys()) {
    const parsed = parseBucketFile(name);
    if (!parsed) return null;
    if (parsed.buckets > 1) counts.set(decodeURIComponent(parsed.folder), parsed.buckets);
  }
  const byFile = fileLeases(set.leases, counts, true);
  if (byFile.size !== files.size) return null;
  const groups = new Map<string, LeaseGroup>();
  for (const [name, leases] of byFile) {
    const oid = files.get(name);
    if (!oid) return null;
    groups.set(name, { oid, leases });
  }
  countsOf.set(groups, counts);
  return groups;
}

/**
 * A folder tree's entries when every one is a plain file with an ASCII name (what a writer of
 * prefix files makes), else null (the caller then parses it entry by entry, to say what is
 * wrong). Read from one latin1 copy of the tree, names sliced and ids decoded once each: three
 * times as fast as parseEntries, and every process reads the `leases/` folder of each new tip (a
 * racer at 900 leases, an agent's auto-lease at 500 in a cold process).
 */
function plainFiles(data: Buffer, oidBytes: number, lengths?: number[]): TreeEntry[] | null {
  const text = data.toString("latin1");
  const out: TreeEntry[] = [];
  for (let i = 0; i < text.length; ) {
    const sp = text.indexOf(" ", i);
    const nul = sp < 0 ? -1 : text.indexOf("\0", sp);
    if (nul < 0 || nul + 1 + oidBytes > data.length) return null;
    if (text.slice(i, sp) !== "100644") return null;
    const name = text.slice(sp + 1, nul);
    if (/[^\x00-\x7f]/.test(name)) return null;
    out.push({ mode: "100644", name, oid: data.toString("hex", nul + 1, nul + 1 + oidBytes) });
    lengths?.push(nul + 1 + oidBytes - i);
    i = nul + 1 + oidBytes;
  }
  return out;
}

/** Tree entries with their modes; fails on a tree that is not well formed. */
function parseEntries(data: Buffer, oidBytes: number, ref: string): TreeEntry[] {
  return treeEntries(data, oidBytes) ?? fail("corrupt_state", `${ref} is corrupt: a tree object is not well formed`, { ref });
}

/**
 * Parsed prefix files by blob id, with the file name their leases were checked against: a blob
 * never changes, so a new tip costs only its changed files.
 */
export type GroupCache = Map<string, { leases: readonly Lease[]; file: string }>;

/**
 * Reads a format 2 record at commit `tip`: each prefix file checked against the lease schema and
 * against its name (a lease filed under the wrong prefix would hide from filtered readers).
 * `bounds` are for records received from other clones.
 */
export async function readLeaseTree(
  reader: ObjectReader,
  oidBytes: number,
  tip: string,
  ref: string,
  cache: GroupCache | null,
  bounds: { blob: number } | null = null,
  prev: { set: LeaseSet; groups: ReadonlyMap<string, LeaseGroup> } | null = null,
): Promise<{ set: LeaseSet; groups: Map<string, LeaseGroup> }> {
  const commit = parseCommit(await readTyped(reader, tip, "commit", ref));
  const root = parseEntries(await readTyped(reader, commit.tree, "tree", ref), oidBytes, ref);
  const marker = root.find((e) => e.name === "format");
  const v2 = marker?.oid === treeMarkerOid(oidBytes, LEASE_TREE_FORMAT_V2);
  if (marker && !v2 && marker.oid !== treeMarkerOid(oidBytes)) {
    const text = (await reader.read(marker.oid))?.data.toString("utf8") ?? "";
    fail("newer_format", `${ref} was written by a newer git-handoff (${JSON.stringify(text.trim().slice(0, 40))}; this build reads lease formats 1, ${LEASE_TREE_FORMAT_V2} and ${LEASE_TREE_FORMAT}): upgrade git-handoff`, { ref });
  }
  const folder = root.find((e) => e.name === LEASE_FOLDER);
  if (!folder || folder.mode !== "40000") fail("corrupt_state", `${ref} is corrupt: its tree has no ${LEASE_FOLDER}/ folder`, { ref });
  for (const e of root) if (e.name !== "format" && e.name !== LEASE_FOLDER) fail("corrupt_state", `${ref} is corrupt: unexpected entry ${JSON.stringify(e.name.slice(0, 80))} beside ${LEASE_FOLDER}/`, { ref });
  const data = await readTyped(reader, folder.oid, "tree", ref);
  // A tip a few writes past the set before: only the files whose entries changed are looked at.
  const known = prev && !v2 ? folders3.get(prev.groups) : undefined;
  const diff = known ? diffFolder(known, data, oidBytes, MAX_DERIVED_FILES) : null;
  if (diff) return readChanged(reader, ref, cache, bounds, prev!, diff.changes, diff.next);
  const lengths: number[] = [];
  const plain = plainFiles(data, oidBytes, lengths);
  const files = plain ?? parseEntries(data, oidBytes, ref);
  if (files.length > MAX_LEASE_FILES) fail("corrupt_state", `${ref} holds ${files.length} lease files; at most ${MAX_LEASE_FILES}`, { ref });
  const groups = new Map<string, LeaseGroup>();
  // Format 3: each folder's leases in files of one bucket count, every lease in its bucket.
  const counts = new Map<string, number>();
  // Whether the names come in git's order (a writer's do), so a write can take its order from them.
  let inOrder = true;
  let last = "";
  for (const f of files) {
    if (f.mode !== "100644") fail("corrupt_state", `${ref} is corrupt: ${LEASE_FOLDER}/${JSON.stringify(f.name.slice(0, 80))} is not a plain file`, { ref });
    if (inOrder && last !== "" && byFileName(last, f.name) >= 0) inOrder = false;
    last = f.name;
    const at = v2 ? null : leaseFileName(ref, f.name);
    // A file the set before held under this very name: its leases were checked (or written) then.
    const before = prev?.groups.get(f.name);
    const same = before?.oid === f.oid ? before : undefined;
    const { leases, checked } = await leasesOfFile(reader, ref, cache, bounds, f, same);
    const key = leaseKey(leases[0]!);
    if (at) {
      const was = counts.get(key);
      if (was !== undefined && was !== at.buckets) spreadTwice(ref, key, was, at.buckets);
      counts.set(key, at.buckets);
    }
    if (!checked) checkFiled(leases, f, at, ref, cache);
    groups.set(f.name, same ?? { oid: f.oid, leases });
  }
  if (!v2) countsOf.set(groups, counts);
  if (inOrder) {
    // A foreign tip's folder written next takes its order from these names instead of sorting
    // every one again (encodeFolder): a racer at 1,000 leases wrote over others' tips each time.
    const names = files.map((f) => f.name);
    folderOrder.set(groups, names);
    if (plain && !v2) folders3.set(groups, folderBytes(data, names, lengths));
  }
  // The same order as a format 1 record, so readers and outputs cannot tell the formats apart.
  return { set: { leases: (prev && derivedLeases(prev, groups)) || sortLeases([...groups.values()].flatMap((g) => g.leases)) }, groups };
}

/** A format 3 prefix file's name read back; a name no writer makes is a corrupt record. */
function leaseFileName(ref: string, name: string): NonNullable<ReturnType<typeof parseBucketFile>> {
  const at = bucketFileOf(name);
  if (!at) fail("corrupt_state", `${ref} is corrupt: ${LEASE_FOLDER}/${JSON.stringify(name.slice(0, 80))} is not a lease file's name`, { ref });
  return at;
}

/**
 * A prefix file's leases: those of `same` (this very file, read before), or those of its blob
 * parsed before, else the blob parsed now; never none. `checked`: already checked under this name.
 */
async function leasesOfFile(reader: ObjectReader, ref: string, cache: GroupCache | null, bounds: { blob: number } | null, f: TreeEntry, same?: LeaseGroup): Promise<{ leases: readonly Lease[]; checked: boolean }> {
  const hit = same ? { leases: same.leases, file: f.name } : cache?.get(f.oid);
  // From another clone (`bounds`): measured before it is read.
  const bound = bounds ? { bytes: bounds.blob, tooBig: (size: number) => `${LEASE_FOLDER}/${f.name.slice(0, 80)} is ${size} bytes; at most ${bounds.blob}` } : undefined;
  const leases = hit ? hit.leases : parseGroup(await readTyped(reader, f.oid, "blob", ref, bound), ref, f.name);
  if (!leases.length) fail("corrupt_state", `${ref} is corrupt: ${LEASE_FOLDER}/${f.name.slice(0, 80)} holds no lease`, { ref });
  return { leases, checked: hit?.file === f.name };
}

/**
 * Every lease of a prefix file is filed under that file's name (one filed elsewhere would hide
 * from filtered readers); a blob checked under its name is kept in `cache` (read again, it needs
 * no second look).
 */
function checkFiled(leases: readonly Lease[], f: TreeEntry, at: { buckets: number } | null, ref: string, cache: GroupCache | null): void {
  for (const l of leases) {
    const filed = at ? bucketFile(leaseKey(l), at.buckets, bucketOf(l.pattern, at.buckets)) : groupFile(leaseKey(l));
    if (filed !== f.name) fail("corrupt_state", `${ref} is corrupt: the lease on ${JSON.stringify(l.pattern.slice(0, 80))} is filed under ${f.name.slice(0, 80)}`, { ref });
  }
  if (cache) {
    if (cache.size >= GROUP_CACHE_LIMIT) cache.clear();
    cache.set(f.oid, { leases, file: f.name });
  }
}

/**
 * A format 3 set whose folder differs from the one before (`prev`, read or written in order by
 * this process) in `changes` only (lease-folder-diff.ts): the other files' groups are the ones
 * before, each changed file checked as a whole read checks it, and the bucket counts only where a
 * file came or went (a modified file keeps its name, so its folder and count).
 */
async function readChanged(
  reader: ObjectReader,
  ref: string,
  cache: GroupCache | null,
  bounds: { blob: number } | null,
  prev: { set: LeaseSet; groups: ReadonlyMap<string, LeaseGroup> },
  changes: readonly FolderChange[],
  next: FolderBytes,
): Promise<{ set: LeaseSet; groups: Map<string, LeaseGroup> }> {
  if (next.names.length > MAX_LEASE_FILES) fail("corrupt_state", `${ref} holds ${next.names.length} lease files; at most ${MAX_LEASE_FILES}`, { ref });
  const groups = new Map(prev.groups);
  const counts = new Map(bucketCounts(prev.groups));
  const came = new Map<string, number>();
  const went: { key: string; buckets: number }[] = [];
  for (const c of changes) {
    const before = prev.groups.get(c.name);
    if (c.oid === null) {
      groups.delete(c.name);
      if (before?.leases.length) went.push({ key: leaseKey(before.leases[0]!), buckets: bucketFileOf(c.name)?.buckets ?? 1 });
      continue;
    }
    const at = leaseFileName(ref, c.name);
    const f = { mode: "100644", name: c.name, oid: c.oid };
    const { leases, checked } = await leasesOfFile(reader, ref, cache, bounds, f);
    if (!checked) checkFiled(leases, f, at, ref, cache);
    groups.set(c.name, { oid: c.oid, leases });
    if (before) continue; // the same name: the same folder and count
    const key = leaseKey(leases[0]!);
    const was = came.get(key);
    if (was !== undefined && was !== at.buckets) spreadTwice(ref, key, was, at.buckets);
    came.set(key, at.buckets);
  }
  for (const { key, buckets } of went) if (!came.has(key) && !hasFiles(groups, key, buckets)) counts.delete(key);
  for (const [key, buckets] of came) {
    // The folder's files before (all of one count) that are still there must have this count too.
    const had = counts.get(key) ?? 1;
    if (had !== buckets && hasFiles(groups, key, had)) spreadTwice(ref, key, had, buckets);
    counts.set(key, buckets);
  }
  countsOf.set(groups, counts);
  folderOrder.set(groups, next.names as string[]);
  folders3.set(groups, next);
  diffed.add(groups);
  const names = changes.map((c) => c.name);
  return { set: { leases: (isInLeaseOrder(prev.set.leases) && leasesAfter(prev, groups, names)) || sortLeases([...groups.values()].flatMap((g) => g.leases)) }, groups };
}

/** Whether `groups` holds any file of `key`'s leases spread over `buckets` files. */
function hasFiles(groups: ReadonlyMap<string, LeaseGroup>, key: string, buckets: number): boolean {
  for (let b = 0; b < buckets; b++) if (groups.has(bucketFile(key, buckets, b))) return true;
  return false;
}

function spreadTwice(ref: string, key: string, a: number, b: number): never {
  fail("corrupt_state", `${ref} is corrupt: the leases of ${JSON.stringify(key.slice(0, 80))} are spread over ${a} and ${b} files at once`, { ref });
}

/** parseBucketFile, kept by name: every tip of a set names the same files again. */
function bucketFileOf(name: string): ReturnType<typeof parseBucketFile> {
  return remembered(parsedNames, name, parseBucketFile);
}

const parsedNames = new Map<string, ReturnType<typeof parseBucketFile>>();

/**
 * A new tip's leases in order from the set read or written before it, when only a few of its
 * files changed: the leases of the changed files taken out and put in by binary search, the new
 * set linked to the one before (lease-order.ts) so that what is kept per set (lease-groups.ts) is
 * patched, not built again. Eight racers at 1,000 leases each read every tip the others wrote
 * with a sort of every lease and a fresh grouping. Null when much changed (a sort is as cheap)
 * or the set before is not in this process's order. The set before holds exactly the leases of
 * its groups, as every entry of the lease index does (read, or written with its files).
 */
function derivedLeases(prev: { set: LeaseSet; groups: ReadonlyMap<string, LeaseGroup> }, groups: ReadonlyMap<string, LeaseGroup>): Lease[] | null {
  if (!isInLeaseOrder(prev.set.leases)) return null;
  const changed: string[] = [];
  for (const [name, g] of prev.groups) {
    if (groups.get(name)?.oid === g.oid) continue;
    if (changed.push(name) > MAX_DERIVED_FILES) return null;
  }
  for (const name of groups.keys()) {
    if (prev.groups.has(name)) continue; // a changed one is listed already
    if (changed.push(name) > MAX_DERIVED_FILES) return null;
  }
  return leasesAfter(prev, groups, changed);
}

/** The set before (in lease order) with the leases of the files named in `changed` taken out and those of the files now under these names put in. */
function leasesAfter(prev: { set: LeaseSet; groups: ReadonlyMap<string, LeaseGroup> }, groups: ReadonlyMap<string, LeaseGroup>, changed: readonly string[]): Lease[] {
  const gone = new Set<Lease>();
  const added: Lease[] = [];
  for (const name of changed) {
    const was = prev.groups.get(name);
    const now = groups.get(name);
    if (was && now?.oid === was.oid) continue;
    if (was) for (const l of was.leases) gone.add(l);
    if (now) added.push(...now.leases);
  }
  if (!gone.size && !added.length) return prev.set.leases as Lease[];
  const kept = keepOrder(prev.set.leases, prev.set.leases.filter((l) => !gone.has(l)));
  return withLeases(kept, added);
}

/** Past this many changed files a new tip's set is sorted afresh. */
const MAX_DERIVED_FILES = 16;

const GROUP_CACHE_LIMIT = 50_000;

function parseGroup(data: Buffer, ref: string, name: string): Lease[] {
  let json: unknown;
  try {
    json = JSON.parse(data.toString("utf8"));
  } catch {
    fail("corrupt_state", `${ref} is corrupt: ${LEASE_FOLDER}/${name.slice(0, 80)} is not valid JSON`, { ref });
  }
  const parsed = LeaseSet.safeParse(json);
  if (!parsed.success) fail("corrupt_state", `${ref} is corrupt: ${LEASE_FOLDER}/${name.slice(0, 80)}: ${describeIssues(parsed.error)}`, { ref });
  return parsed.data.leases;
}
