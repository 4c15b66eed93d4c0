// All file leases live in one record on one ref, refs/handoff/leases. Why one ref and not one per
// lease: (1) exclusivity between overlapping globs is a property of the whole set, and one
// compare-and-swap on one ref makes "never two overlapping exclusive leases" hold by construction,
// where per-lease refs would need a transaction verifying every other lease ref; (2) a check, which
// runs before every agent edit, is one ref read and one blob read, whatever the number of leases.
// The price is that all lease writes serialize on one ref: writes are rare (a lease, a release, an
// agent's first edit of a file) next to checks, and a lost race just re-runs on fresh state.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { HandoffError } from "../core/errors.ts";
import { EMPTY_LEASES, LeaseSet } from "../core/lease.ts";
import { buildPolicy, type LeasePolicy } from "../core/lease-policy.ts";
import type { Outcome } from "../core/outcome.ts";
import type { OpContext } from "../core/task-ops.ts";
import { readRecord, writeSteps } from "./codec.ts";
import { REF_ROOT, type CasOptions, type Store } from "./store.ts";

export const LEASES_REF = `${REF_ROOT}leases`;
export const LEASES_FILE = "leases.json";

/**
 * Reads the lease set at a commit. A cold process spends more on this than on anything else a hook
 * does: three object reads, inflating ~250 KB for 1,000 leases, and schema validation (~35 ms
 * cold). So the first reader of a new tip leaves `.git/handoff/leases.cache`: the tip's commit id
 * on the first line, then the validated record as JSON. A commit id names its content, so a cache
 * whose first line is the current tip is that tip's record; anything else is ignored and replaced.
 * It is a cache keyed by the ref tip (DESIGN: thrown away and rebuilt at will).
 */
export async function readLeasesAt(store: Store, tip: string | null): Promise<LeaseSet> {
  if (!tip) return EMPTY_LEASES;
  const cacheFile = `${store.repo.commonDir}/handoff/leases.cache`;
  const cached = readSmall(cacheFile);
  if (cached && cached.startsWith(tip + "\n")) {
    try {
      return JSON.parse(cached.slice(tip.length + 1)) as LeaseSet;
    } catch {
      /* a torn or foreign file: fall through to the validating read */
    }
  }
  const { record } = await readRecord(store.reader, store.oidBytes, tip, LEASES_REF, LEASES_FILE, LeaseSet);
  writeSmall(cacheFile, `${tip}\n${JSON.stringify(record)}`);
  return record;
}

function readSmall(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

function writeSmall(path: string, text: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, text);
    renameSync(tmp, path);
  } catch {
    /* only a slower next read */
  }
}

/** The lease set as stored (expired leases included: readers filter, writers sweep). */
export async function loadLeases(store: Store): Promise<{ set: LeaseSet; tip: string | null }> {
  const tip = await store.readRef(LEASES_REF);
  return { set: await readLeasesAt(store, tip), tip };
}

/**
 * One lease per line: a third smaller than indented JSON (less to inflate and parse before every
 * edit) and `git log -p refs/handoff/leases` still shows one changed line per changed lease.
 */
export function serializeLeases(set: LeaseSet): string {
  return set.leases.length ? `{"leases": [\n${set.leases.map((l) => JSON.stringify(l)).join(",\n")}\n]}\n` : `{"leases": []}\n`;
}

/** Writes the steps of a lease outcome on top of `tip`; null when there is nothing to write. */
export function leaseUpdate(store: Store, tip: string | null, out: Outcome<LeaseSet>) {
  if (!out.ok) throw new HandoffError(out.refusal);
  if (out.steps.length === 0) return null;
  return { ref: LEASES_REF, new: writeSteps(store.writer, tip, LEASES_FILE, out.steps, serializeLeases), old: tip };
}

/** Applies a pure lease operation under compare-and-swap, retrying on fresh state after a lost race. */
export function mutateLeases(store: Store, op: (set: LeaseSet, ctx: OpContext) => Outcome<LeaseSet>, opts: CasOptions = {}): Promise<LeaseSet> {
  return store.casLoop(async (now) => {
    const { set, tip } = await loadLeases(store);
    const out = op(set, { actor: store.actor, now });
    const update = leaseUpdate(store, tip, out);
    return { updates: update ? [update] : [], result: out.ok ? out.record : set };
  }, opts);
}

/** The lease policy: mode and ignore globs from .handoff.yaml, plus .gitattributes markings. */
export function loadPolicy(store: Store): LeasePolicy {
  let attrs: string | null = null;
  if (store.repo.workTree) {
    try {
      attrs = readFileSync(`${store.repo.workTree}/.gitattributes`, "utf8");
    } catch {
      attrs = null;
    }
  }
  return buildPolicy(store.config, attrs);
}
