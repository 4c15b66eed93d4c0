// State that belongs to this clone only and is never pushed: conflicts found at sync (waiting for
// their agent to read them) and tentative operations made offline (waiting for the next sync).
// It lives under refs/handoff-local/, outside the refs/handoff/* that sync exchanges.
import * as z from "zod/mini";
import { HandoffEvent } from "../core/event.ts";
import { refComponentProblem, sanitizeIdPart } from "../core/ids.ts";
import { isoTime, lazySchema } from "../core/schema-helpers.ts";
import { listRefs, updateRefs, type RefUpdate } from "../git/refs.ts";
import { commitObject, encodeFiles, FORMAT_MARKER, readRecord } from "../store/codec.ts";
import { readCommit } from "../store/history.ts";
import type { Store } from "../store/store.ts";

export const LOCAL_ROOT = "refs/handoff-local/";
export const CONFLICTS_PREFIX = `${LOCAL_ROOT}conflicts/`;
export const TENTATIVE_PREFIX = `${LOCAL_ROOT}tentative/`;

/** An operation that no longer applied when replayed on the remote's state. */
export const Conflict = lazySchema(() =>
  z.object({
    ref: z.string(),
    task: z.optional(z.string()),
    agent: z.string(),
    /** The event as it was recorded locally. */
    event: HandoffEvent,
    /** The local commit that carried it. */
    commit: z.string(),
    code: z.string(),
    message: z.string(),
    /** Who holds the task now, when that is why it failed. */
    holder: z.optional(z.string()),
    detected_at: isoTime(),
    tentative: z.optional(z.boolean()),
  }),
);
export type Conflict = z.infer<typeof Conflict>;

const CONFLICT_FILE = "conflict.json";

export function conflictsRef(agent: string): string {
  // Agent names written by other clones are not trusted to be ref-safe.
  const safe = refComponentProblem(agent) === null ? agent : `${sanitizeIdPart(agent)}-${Buffer.from(agent).toString("hex").slice(0, 16)}`;
  return CONFLICTS_PREFIX + safe;
}

/** Appends conflicts to each agent's local list (one commit each, so `git log` shows them too). */
export async function recordConflicts(store: Store, conflicts: Conflict[]): Promise<void> {
  const byAgent = new Map<string, Conflict[]>();
  for (const c of conflicts) byAgent.set(c.agent, [...(byAgent.get(c.agent) ?? []), c]);
  for (const [agent, list] of byAgent) {
    const ref = conflictsRef(agent);
    await store.casLoop(async () => {
      const old = (await listRefs(store.storeCwd, ref)).find((t) => t.name === ref)?.oid ?? null;
      const format = store.writer.write("blob", FORMAT_MARKER);
      let tip = old;
      for (const c of list) {
        const blob = store.writer.write("blob", JSON.stringify(c, null, 2) + "\n");
        const tree = store.writer.write("tree", encodeFiles(new Map([["format", format], [CONFLICT_FILE, blob]])));
        const message = `conflict ${c.task ?? c.ref} for ${c.agent}: ${c.message.split("\n")[0]}\n\n${JSON.stringify(c, null, 2)}\n`;
        tip = store.writer.write("commit", commitObject({ tree, parent: tip, author: "git-handoff", at: new Date(c.detected_at), message }));
      }
      return { updates: [{ ref, new: tip!, old }], result: undefined };
    });
  }
}

/** The conflicts waiting for `agent` (every agent's when omitted), oldest first. */
export async function readConflicts(store: Store, agent?: string): Promise<Conflict[]> {
  // Read in-process (no git spawn): `status` asks on every call, mostly to find nothing.
  const own = agent ? conflictsRef(agent) : null;
  const ownTip = own ? await store.readRef(own) : null;
  const tips = own ? (ownTip ? [{ name: own, oid: ownTip }] : []) : await store.listRefs(CONFLICTS_PREFIX);
  const out: Conflict[] = [];
  for (const { name, oid } of tips) {
    let at: string | undefined = oid;
    const mine: Conflict[] = [];
    for (let n = 0; at && n < 200; n++) {
      mine.push((await readRecord(store.reader, store.oidBytes, at, name, CONFLICT_FILE, Conflict)).record);
      at = (await readCommit(store, at, name)).parents[0];
    }
    out.push(...mine.reverse());
  }
  return out.filter((c) => !agent || c.agent === agent).sort((a, b) => a.detected_at.localeCompare(b.detected_at));
}

/** Clears an agent's conflicts once read (compare-and-swap on the tip that was shown). */
export async function ackConflicts(store: Store, agent: string): Promise<number> {
  const ref = conflictsRef(agent);
  const shown = await readConflicts(store, agent);
  const tip = (await listRefs(store.storeCwd, ref)).find((t) => t.name === ref)?.oid;
  if (!tip) return 0;
  await store.casLoop(async () => ({ updates: [{ ref, new: null, old: tip }], result: undefined }));
  return shown.length;
}

/** A write made offline: the local commit that carries it, per entity ref. */
export interface Tentative {
  ref: string;
  commit: string;
  event: HandoffEvent | null;
  marker: string;
}

export function tentativeRef(ref: string): string {
  return TENTATIVE_PREFIX + ref.slice("refs/handoff/".length);
}

export async function markTentative(store: Store, updates: RefUpdate[]): Promise<void> {
  const current = new Map((await listRefs(store.storeCwd, TENTATIVE_PREFIX)).map((t) => [t.name, t.oid]));
  const marks: RefUpdate[] = updates
    .filter((u) => u.new !== null)
    .map((u) => ({ ref: tentativeRef(u.ref), new: u.new, old: current.get(tentativeRef(u.ref)) ?? null }));
  if (marks.length) await updateRefs(store.storeCwd, marks, store.zeroOid, store.actor.agent);
}

export async function listTentative(store: Store): Promise<Tentative[]> {
  const { eventFromMessage } = await import("../store/codec.ts");
  const out: Tentative[] = [];
  for (const { name, oid } of await store.listRefs(TENTATIVE_PREFIX)) {
    let event: HandoffEvent | null = null;
    try {
      event = eventFromMessage((await readCommit(store, oid, name)).message);
    } catch {
      event = null;
    }
    out.push({ ref: "refs/handoff/" + name.slice(TENTATIVE_PREFIX.length), commit: oid, event, marker: name });
  }
  return out;
}

export async function clearTentative(store: Store, marks: Tentative[]): Promise<void> {
  if (!marks.length) return;
  await updateRefs(store.storeCwd, marks.map((m) => ({ ref: m.marker, new: null, old: m.commit })), store.zeroOid);
}
