// Validate on receive: every ref whose remote value changed is checked (src/sync/validate-receive.ts)
// before anything integrates it; what fails is listed in the quarantine and shown at its local
// value. With nothing changed and nothing quarantined this costs one ref read. Split out of
// tracking.ts: every way of bringing tracking refs up to date (the refresh, the fetch-first look,
// a waiter's fetch of one task) ends here.
import type { Store } from "../store/store.ts";
import { readQuarantine, writeQuarantine, type Quarantined } from "./quarantine.ts";
import type { Refreshed } from "./refresh-tracking.ts";
import type { Tips } from "./tracking.ts";
import { sharesOperation, validateReceived, type Verdict } from "./validate-receive.ts";

/** The same screening for a few refs fetched on their own (a waiter following one task): only those are judged. */
export async function screenFetched(store: Store, remote: string, before: Tips, after: Tips): Promise<Refreshed & { ok: true }> {
  return screenReceived(store, remote, before, after, true);
}

export async function screenReceived(store: Store, remote: string, before: Tips, after: Tips, partial = false, unsent?: Map<string, string>): Promise<Refreshed & { ok: true }> {
  const q = await readQuarantine(store, remote);
  // A partial fetch says nothing about the refs it did not ask for: their quarantine stands.
  const candidates = new Set<string>([...q.entries.keys()].filter((ref) => !partial || after.has(ref)));
  for (const [ref, oid] of after) if (before.get(ref) !== oid) candidates.add(ref);
  if (!candidates.size) return { ok: true, before, after, refused: [], newlyRefused: [] };
  const entries = new Map(q.entries);
  const refused: Quarantined[] = [];
  const newlyRefused: Quarantined[] = [];
  const now = store.now();
  const accepted: string[] = [];
  /** Operations (author and time) of refused commits, and a ref each was refused on. */
  const operations = new Map<string, string>();
  for (const ref of candidates) {
    const tip = after.get(ref);
    const held = entries.get(ref);
    if (tip === undefined) {
      entries.delete(ref); // gone from the remote
      continue;
    }
    if (held && held.oid === tip) {
      refused.push(held);
      continue;
    }
    const anchor = held ? held.anchor : (before.get(ref) ?? null);
    const cannot = unsent?.get(ref);
    const verdict: Verdict = cannot !== undefined ? { ok: false, kind: "invalid", reason: cannot } : await validateReceived(store, ref, tip, anchor, now);
    if (verdict.ok) {
      entries.delete(ref);
      accepted.push(ref);
      continue;
    }
    const entry: Quarantined = { ref, oid: tip, anchor, kind: verdict.kind, reason: verdict.reason, at: now.toISOString(), ...(cannot !== undefined ? { unsent: true as const } : {}) };
    entries.set(ref, entry);
    refused.push(entry);
    newlyRefused.push(entry);
    if (verdict.operation) operations.set(verdict.operation, ref);
  }
  // Refs written by one operation with a refused one (a claim's task and its leases) wait with it.
  if (operations.size) {
    const keys = new Set(operations.keys());
    for (const ref of accepted) {
      const tip = after.get(ref)!;
      const anchor = before.get(ref) ?? null;
      if (!(await sharesOperation(store, tip, anchor, keys))) continue;
      const entry: Quarantined = { ref, oid: tip, anchor, kind: "invalid", reason: `written by the same operation as a refused change to ${[...operations.values()].join(", ")}`, at: now.toISOString() };
      entries.set(ref, entry);
      refused.push(entry);
      newlyRefused.push(entry);
    }
  }
  if (newlyRefused.length || entries.size !== q.entries.size) {
    // A concurrent sync may have written it first; it decided the same from the same refs.
    await writeQuarantine(store, remote, entries, q.tip, `quarantine of ${remote}: ${entries.size} ref(s)`);
  }
  if (!refused.length) return { ok: true, before, after, refused, newlyRefused };
  const masked = { before: new Map(before), after: new Map(after) };
  for (const e of refused) {
    const local = await store.readRef(e.ref);
    for (const tips of [masked.before, masked.after]) local === null ? tips.delete(e.ref) : tips.set(e.ref, local);
  }
  return { ok: true, ...masked, refused, newlyRefused };
}
