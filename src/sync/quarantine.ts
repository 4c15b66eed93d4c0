// Refs the sync remote holds that failed validation on receive (or come from a newer git-handoff):
// their fetched values stay under refs/handoff-remotes/<remote>/ only, listed here with the reason
// and the last value validated before them. Local to this clone, never pushed.
import * as z from "zod/mini";
import { fail } from "../core/errors.ts";
import { isoTime, lazySchema } from "../core/schema-helpers.ts";
import { commitObject, encodeFiles, FORMAT_MARKER, readRecord } from "../store/codec.ts";
import type { NewerRef, Store } from "../store/store.ts";
import { LOCAL_ROOT } from "./local-area.ts";
import { repairAdvice, repairCommand } from "./repair-hazard.ts";

export const QUARANTINE_PREFIX = `${LOCAL_ROOT}quarantine/`;
const FILE = "quarantine.json";

export const Quarantined = lazySchema(() =>
  z.object({
    ref: z.string(),
    /** The remote's value that failed. */
    oid: z.string(),
    /** The last value of the ref validated here (what a later value must descend from). */
    anchor: z.nullable(z.string()),
    kind: z.enum(["invalid", "newer"]),
    reason: z.string(),
    at: isoTime(),
    /** The remote listed this value but could not send its objects: nothing of it was fetched. */
    unsent: z.optional(z.literal(true)),
  }),
);
export type Quarantined = z.infer<typeof Quarantined>;

const QuarantineList = lazySchema(() => z.object({ remote: z.string(), entries: z.array(Quarantined) }));

export function quarantineRef(remote: string): string {
  return QUARANTINE_PREFIX + remote;
}

export async function readQuarantine(store: Store, remote: string): Promise<{ entries: Map<string, Quarantined>; tip: string | null }> {
  const ref = quarantineRef(remote);
  const tip = await store.readRef(ref);
  if (!tip) return { entries: new Map(), tip };
  const { record } = await readRecord(store.reader, store.oidBytes, tip, ref, FILE, QuarantineList);
  return { entries: new Map(record.entries.map((e) => [e.ref, e])), tip };
}

/** Replaces the list (compare-and-swap on its ref); an empty list deletes the ref. */
export async function writeQuarantine(store: Store, remote: string, entries: Map<string, Quarantined>, old: string | null, why: string): Promise<boolean> {
  const ref = quarantineRef(remote);
  let next: string | null = null;
  if (entries.size) {
    const format = store.writer.write("blob", FORMAT_MARKER);
    const body = { remote, entries: [...entries.values()].sort((a, b) => a.ref.localeCompare(b.ref)) };
    const blob = store.writer.write("blob", JSON.stringify(body, null, 2) + "\n");
    const tree = store.writer.write("tree", encodeFiles(new Map([["format", format], [FILE, blob]])));
    next = store.writer.write("commit", commitObject({ tree, parent: old, author: "git-handoff", at: store.now(), message: `${why}\n` }));
  } else if (old === null) return true;
  return (await store.updateRefs([{ ref, new: next, old }])).ok;
}

/** Refuses an exclusive write to an entity whose remote copy is quarantined: this clone cannot know its state. */
export async function refuseQuarantined(store: Store, remote: string, refs: string[]): Promise<void> {
  const { entries } = await readQuarantine(store, remote);
  for (const ref of refs) {
    const q = entries.get(ref);
    if (q && q.kind === "newer") refuseNewer(new Map([[ref, { ref, remote, reason: q.reason }]]), [ref]);
    if (q) {
      const advice = (await repairAdvice(store, [q])).get(ref);
      fail("quarantined", `${ref} on ${remote} failed validation (${q.reason}); no exclusive operation on it until it is repaired`, { ref, remote, reason: q.reason }, [
        { action: "fix_input", detail: `a person checks the remote, then overwrites it with this clone's state: ${repairCommand(advice)}` },
      ]);
    }
  }
}

/** Refuses any write to a ref held back as from a newer git-handoff (newer-refs.ts), before anything is written. */
export function refuseNewer(held: Map<string, NewerRef>, refs: string[]): void {
  for (const ref of refs) {
    const q = held.get(ref);
    if (q) fail("quarantined", `${ref} on ${q.remote} comes from a newer git-handoff (${q.reason}); upgrade to change it`, { ref, remote: q.remote, reason: q.reason });
  }
}
