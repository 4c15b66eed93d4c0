// All file leases live in one record on one ref, refs/handoff/leases. Why one ref and not one per
// lease: (1) exclusivity between overlapping globs is a property of the whole set, and one
// compare-and-swap on one ref makes "never two overlapping exclusive leases" hold by construction,
// where per-lease refs would need a transaction verifying every other lease ref; (2) a check, which
// runs before every agent edit, is one ref read and one blob read, whatever the number of leases.
// The price is that all lease writes serialize on one ref: writes are rare (a lease, a release, an
// agent's first edit of a file) next to checks, and a lost race just re-runs on fresh state.
import { readFileSync } from "node:fs";
import { fileStamp } from "../git/file-stamp.ts";
import { HandoffError } from "../core/errors.ts";
import { EMPTY_LEASES, LeaseSet } from "../core/lease.ts";
import { buildPolicy, gitattributesIgnores, leftOutIgnores, type LeasePolicy } from "../core/lease-policy.ts";
import type { Outcome } from "../core/outcome.ts";
import type { OpContext } from "../core/task-ops.ts";
import { parseCommit, parseTree, readRecord, readTyped, writeSteps } from "./codec.ts";
import { leaseCacheFile, readLeaseCache, saveLeaseCache, type LeaseFilter } from "./lease-cache-file.ts";
import { leaseIndexOf, type IndexedLeases, type LeaseIndex } from "./lease-index.ts";
import { groupsAt, readLeaseTree, writeLeaseTree } from "./lease-tree.ts";
import { LEASE_FOLDER, LEASE_TREE_AT, LEASE_TREE_FORMAT, LEASE_TREE_FORMAT_V2 } from "./lease-tree-format.ts";
import { REF_ROOT, type CasOptions, type Store } from "./store.ts";

export const LEASES_REF = `${REF_ROOT}leases`;
export const LEASES_FILE = "leases.json";

export type { LeaseFilter } from "./lease-cache-file.ts";

/**
 * Reads the lease set at a commit: from the in-process index when this process has seen the tip
 * (lease-index.ts), else from the record in either format. A cold process spends more on this
 * than on anything else a hook does: inflating ~250 KB for 1,000 leases, schema validation
 * (~35 ms cold) and parsing it all. So the first reader of a new tip in a one-shot process
 * leaves `.git/handoff/leases-<FORMAT>.cache` (lease-cache-file.ts): the tip's commit id on the first line,
 * then the stored format, an index, and one validated lease per line, keyed by the first folder
 * of its pattern (`*` when that is a glob). A commit id names its content, so a cache whose first
 * line is the current tip is that tip's record; anything else is ignored and replaced. With a
 * filter only the lines whose key can matter are read and parsed. It is a cache keyed by the ref
 * tip (DESIGN: thrown away and rebuilt at will).
 */
export async function readLeasesAt(store: Store, tip: string | null, filter?: LeaseFilter): Promise<{ set: LeaseSet; partial: boolean }> {
  if (!tip) return { set: EMPTY_LEASES, partial: false };
  const index = leaseIndexOf(store);
  const known = index.get(tip);
  if (known) return { set: known.set, partial: false };
  // A long-running process keeps what it read in the index; the file is for one-shot processes.
  const cacheFile = store.warm ? null : leaseCacheFile(store.repo.commonDir);
  const cached = cacheFile
    ? readLeaseCache(cacheFile, tip, (c) => {
        // Left by the writer of the tip before its update landed (builds before the sixteenth
        // session: now the writer leaves it after): usable while the objects it wrote for it are
        // there (a prune may remove objects no ref points at yet); else the record is read, and
        // checked, from git.
        if (c.fresh !== null && !store.hasLooseObjects(c.fresh.split(" ").filter(Boolean))) return null;
        const hit = c.leases(filter);
        return hit && { hit, format: c.format };
      })
    : null;
  if (cached) {
    const { hit } = cached;
    if (!filter) {
      // A whole set is read to be written (or listed): a tree's prefix files come from the
      // stored tree, so the write keeps the blobs of the files it does not change. A cache
      // without the format (an older git-handoff's) costs two small object reads to learn it.
      const format = cached.format ?? (await formatAt(store, tip));
      // A format 2 tree's files are its folders': a write then writes format 3 files anew.
      const groups = format === LEASE_TREE_FORMAT ? await groupsAt(store.reader, store.oidBytes, tip, LEASES_REF, hit.set).catch(() => null) : null;
      index.put(tip, { set: hit.set, format, groups });
    }
    return hit;
  }
  const entry = await readStored(store, tip, index);
  index.put(tip, entry);
  if (cacheFile) saveLeaseCache(cacheFile, tip, entry.set, entry.format);
  return { set: entry.set, partial: false };
}

async function formatAt(store: Store, tip: string): Promise<number> {
  const commit = parseCommit(await readTyped(store.reader, tip, "commit", LEASES_REF));
  const tree = parseTree(await readTyped(store.reader, commit.tree, "tree", LEASES_REF), store.oidBytes, LEASES_REF);
  return !tree.has(LEASES_FILE) && tree.has(LEASE_FOLDER) ? LEASE_TREE_FORMAT : 1;
}

/** The record at `tip` in either format, validated. */
async function readStored(store: Store, tip: string, index: LeaseIndex): Promise<IndexedLeases> {
  const commit = parseCommit(await readTyped(store.reader, tip, "commit", LEASES_REF));
  const tree = parseTree(await readTyped(store.reader, commit.tree, "tree", LEASES_REF), store.oidBytes, LEASES_REF);
  if (!tree.has(LEASES_FILE) && tree.has(LEASE_FOLDER)) {
    const latest = index.latest();
    const prev = latest?.groups ? { set: latest.set, groups: latest.groups } : null;
    const { set, groups } = await readLeaseTree(store.reader, store.oidBytes, tip, LEASES_REF, index.groupCache, null, prev);
    return { set, format: LEASE_TREE_FORMAT, groups };
  }
  const { record } = await readRecord(store.reader, store.oidBytes, tip, LEASES_REF, LEASES_FILE, LeaseSet);
  return { set: record, format: 1, groups: null };
}

/** The lease set as stored (expired leases included: readers filter, writers sweep). */
export async function loadLeases(store: Store): Promise<{ set: LeaseSet; tip: string | null }> {
  const tip = await store.readRef(LEASES_REF);
  return { set: (await readLeasesAt(store, tip)).set, tip };
}

/**
 * Only the leases that can answer for `paths` (plus the caller's own): what a hook needs to
 * check an edit. `partial` says the set is not the whole record: never write it back.
 */
export async function loadLeasesFor(store: Store, filter: LeaseFilter): Promise<{ set: LeaseSet; tip: string | null; partial: boolean }> {
  const tip = await store.readRef(LEASES_REF);
  return { ...(await readLeasesAt(store, tip, filter)), tip };
}

/**
 * One lease per line: a third smaller than indented JSON (less to inflate and parse before every
 * edit) and `git log -p refs/handoff/leases` still shows one changed line per changed lease.
 */
export function serializeLeases(set: LeaseSet): string {
  return set.leases.length ? `{"leases": [\n${set.leases.map((l) => JSON.stringify(l)).join(",\n")}\n]}\n` : `{"leases": []}\n`;
}

/**
 * Writes the steps of a lease outcome on top of `tip`; null when there is nothing to write. A set
 * already stored as a tree, or reaching LEASE_TREE_AT leases, is written as a tree (lease-tree.ts).
 */
export function leaseUpdate(store: Store, tip: string | null, out: Outcome<LeaseSet>) {
  if (!out.ok) throw new HandoffError(out.refusal);
  if (out.steps.length === 0) return null;
  const index = leaseIndexOf(store);
  const before = tip ? index.get(tip) : undefined;
  // Every writer loads the whole set first (loadLeases), which enters it here. Should the index
  // have let it go meanwhile, the size decides (a format 1 record is one every build reads).
  const last = out.steps.at(-1)!.record;
  // Once a tree (format 2 or 3), always a tree: a clone never flips between the formats.
  if ((before?.format ?? 1) >= LEASE_TREE_FORMAT_V2 || last.leases.length >= LEASE_TREE_AT) {
    const { tip: next, groups } = writeLeaseTree(store.writer, tip, before?.groups ?? null, out.steps);
    index.put(next, { set: last, format: LEASE_TREE_FORMAT, groups });
    cacheWritten(store, next, last, LEASE_TREE_FORMAT);
    return { ref: LEASES_REF, new: next, old: tip };
  }
  const next = writeSteps(store, tip, LEASES_FILE, out.steps, serializeLeases);
  index.put(next, { set: last, format: 1, groups: null });
  cacheWritten(store, next, last, 1);
  return { ref: LEASES_REF, new: next, old: tip };
}

/**
 * A one-shot writer leaves the cache for the tip it writes, so the check an agent's hook makes
 * right after its claim reads no object: once its ref update has landed and the objects written
 * for it are checked (Store.whenLanded), so the cache names a tip that is the ref's and whose
 * objects are there. (Written before the update, it had to name those objects, `#fresh`, and every
 * reader looked for each of them: a cache of a build before this one still does.)
 */
function cacheWritten(store: Store, tip: string, set: LeaseSet, format: number): void {
  if (store.warm) return;
  store.whenLanded(tip, (ref) => {
    if (ref === LEASES_REF) saveLeaseCache(leaseCacheFile(store.repo.commonDir), tip, set, format);
  });
}

/** The cache file's text: the tip, its format, one lease a line. */

/** Applies a pure lease operation under compare-and-swap, retrying on fresh state after a lost race. */
export function mutateLeases(store: Store, op: (set: LeaseSet, ctx: OpContext) => Outcome<LeaseSet>, opts: CasOptions = {}): Promise<LeaseSet> {
  return store.casLoop(async (now) => {
    const { set, tip } = await loadLeases(store);
    // Another agent's expired lease is swept or overridden only past the takeover grace (skew.ts).
    const out = op(set, await store.writeContext(now));
    const update = leaseUpdate(store, tip, out);
    return { updates: update ? [update] : [], result: out.ok ? out.record : set };
  }, opts);
}

/** The lease policy: mode and ignore globs from .handoff.yaml, plus .gitattributes markings. */
export function loadPolicy(store: Store): LeasePolicy {
  // Kept per Store (its config never changes) while .gitattributes stays the same file: a claim
  // asks for it, and a missing file read anew is a thrown ENOENT (~15 us) each time.
  const attrsPath = store.repo.workTree ? `${store.repo.workTree}/.gitattributes` : null;
  const stamp = attrsPath ? fileStamp(attrsPath) : "";
  const kept = policies.get(store);
  if (kept && kept.stamp === stamp) return kept.policy;
  let attrs: string | null = null;
  if (attrsPath && stamp) {
    try {
      attrs = readFileSync(attrsPath, "utf8");
    } catch {
      attrs = null;
    }
  }
  const policy = buildPolicy(store.config, attrs);
  // Said as .handoff.yaml's are (config-file.ts): on the command's stderr, in MCP's notices. Once a
  // build of the policy: again only when .gitattributes changed.
  if (attrs) store.notices.push(...leftOutIgnores(".gitattributes", gitattributesIgnores(attrs)).map((w) => `warning: ${w}`));
  policies.set(store, { stamp, policy });
  return policy;
}

/** The lease policy each Store last built, with the stamp of the .gitattributes it read (fileStamp). */
const policies = new WeakMap<Store, { stamp: string; policy: LeasePolicy }>();
