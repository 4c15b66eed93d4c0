// What `sync --repair` would destroy on the remote by putting this clone's value of a refused ref
// in place of the remote's. A refusal on receive is not proof of forgery: a newer or older build,
// or a clock a little off, writes steps this clone refuses although other clones took them and
// acted on them. So a repair that would lower a task's fence (the next grant would repeat a fence
// already handed out: a double grant), undo a finished task or a submitted review, take away a live
// claim or lease, or delete a ref this clone merely lacks is refused unless a person says --force.
// A ref whose very name no git-handoff writes is deleted without it.
import { isLeaseLive, type Lease } from "../core/lease.ts";
import { isLive } from "../core/task-ops.ts";
import type { Store } from "../store/store.ts";
import { placeOf } from "../store/ref-families.ts";
import { LEASES_REF, readLeasesAt } from "../store/lease-store.ts";
import { readTaskAt, TASKS_PREFIX } from "../store/task-store.ts";
import { isFinal, type Task } from "../core/task.ts";
import type { Quarantined } from "./quarantine.ts";

/**
 * What `sync --repair` would do with a ref refused on receive: the command that repairs it and what
 * it does there, in the words `sync`, `status` and their `--json` give (one source, so a hint never
 * names a command that then does something else).
 */
export interface RepairAdvice {
  /** Why a plain `--repair` refuses it (only `--force` overwrites it), or null: `--repair` overwrites it. */
  hazard: string | null;
  /** This clone has no value of it (or its name is one no git-handoff writes): the repair deletes the remote's. */
  deletes: boolean;
  /** The command that repairs it: `git handoff sync --repair`, or `... --repair --force` where a plain one refuses. */
  command: string;
  /** What that command does with it, and why a plain `--repair` will not (a person checks first). */
  hint: string;
}

/** The command that repairs a refused ref: `--force` (after a person checks) where a plain `--repair` refuses it. */
export function repairCommand(advice: RepairAdvice | undefined): string {
  return advice?.hazard ? `git handoff sync --repair --force (a plain --repair refuses: ${advice.hazard})` : "git handoff sync --repair";
}

/**
 * The advice for a ref refused on receive, from what `sync --repair` would do with it (plannedRepair):
 * `--repair`, or, when `--repair` would refuse it (this clone has no value of its own, or the
 * remote's value holds a fence, a finished task, a live claim or lease this clone's lacks),
 * `--repair --force` once a person has checked the remote's value.
 */
export function adviceFor(hazard: string | null, deletes: boolean): RepairAdvice {
  const verb = deletes ? "deletes" : "overwrites";
  if (!hazard) return { hazard, deletes, command: "git handoff sync --repair", hint: `git handoff sync --repair ${verb} it` };
  return { hazard, deletes, command: "git handoff sync --repair --force", hint: `git handoff sync --repair refuses it: ${hazard}; after checking the remote's value, git handoff sync --repair --force ${verb} it` };
}

/** The advice for each ref refused on receive (kind "invalid"), by ref. */
export async function repairAdvice(store: Store, quarantined: readonly Quarantined[]): Promise<Map<string, RepairAdvice>> {
  const out = new Map<string, RepairAdvice>();
  for (const q of quarantined) {
    if (q.kind !== "invalid") continue;
    const { now, hazard } = await plannedRepair(store, q.ref, q.oid, !!q.unsent);
    out.set(q.ref, adviceFor(hazard, now === null));
  }
  return out;
}

/** Each entry with `repair`, its advice, when refused on receive (the `--json` of `sync` and `status`). */
export async function withRepairAdvice<Q extends Quarantined>(store: Store, quarantined: readonly Q[]): Promise<(Q & { repair?: RepairAdvice })[]> {
  const advice = await repairAdvice(store, quarantined);
  return quarantined.map((q) => {
    const repair = advice.get(q.ref);
    return repair ? { ...q, repair } : q;
  });
}

/**
 * What `sync --repair` puts in place of the remote's refused value `was` of `ref` (this clone's
 * value; null: it deletes the remote's), and why a plain `--repair` refuses that (repairHazard).
 * The repair itself and every hint about it decide here, so a hint never names a command that
 * then does something else.
 */
export async function plannedRepair(store: Store, ref: string, was: string, unsent: boolean): Promise<{ now: string | null; hazard: string | null }> {
  // A name no git-handoff writes is deleted: this clone has no ref of that name to put there.
  const now = placeOf(ref).kind === "bad" ? null : await store.readRef(ref);
  return { now, hazard: await repairHazard(store, ref, was, now, unsent) };
}

/**
 * Why overwriting `was` (the remote's refused value of `ref`) with `now` (this clone's, null: none)
 * would lose state other clones may hold, or null when it would not. `unsent`: nothing of the
 * remote's value was fetched.
 */
export async function repairHazard(store: Store, ref: string, was: string, now: string | null, unsent: boolean): Promise<string | null> {
  // A name that does not fit its family's layout (`refs/handoff/leases/x`) is refused by every
  // clone, and no build ever wrote one: layouts have not changed since receive checked them, and a
  // new layout would come as a new family, held back as newer, not refused. It holds nothing any
  // clone reads, and it may stand in git's way of a ref clones need (name-clash.ts): deleting it
  // loses nothing.
  if (placeOf(ref).kind === "bad") return null;
  if (now === null) return "this clone has no value of its own, and a repair never deletes a remote ref on that ground alone";
  // A value the remote cannot send, or whose record does not parse, holds nothing any clone of
  // this build reads: this clone's value loses nothing in its place.
  if (unsent) return null;
  if (ref.startsWith(TASKS_PREFIX)) {
    const theirs = await readable(() => readTaskAt(store, ref, was));
    if (!theirs) return null;
    const mine = await readable(() => readTaskAt(store, ref, now));
    return mine ? taskHazard(theirs, mine, store.now()) : UNREADABLE;
  }
  if (ref === LEASES_REF) {
    const theirs = await readable(async () => (await readLeasesAt(store, was)).set.leases);
    if (!theirs) return null;
    const mine = await readable(async () => (await readLeasesAt(store, now)).set.leases);
    return mine ? leaseHazard(theirs, mine, store.now()) : UNREADABLE;
  }
  return null;
}

const UNREADABLE = "this clone's own value cannot be read (git handoff doctor says why), so nothing shows what the remote's would lose";

function taskHazard(theirs: Task, mine: Task, at: Date): string | null {
  if (theirs.fence > mine.fence) {
    return `it would lower ${theirs.id}'s fence from ${theirs.fence} to ${mine.fence}, so a later claim would be granted a fence already handed out`;
  }
  // A finished task (or work handed in for review) put back to an earlier state would be worked
  // again, or its outcome lost, by every clone that takes the repair.
  if ((isFinal(theirs.status) || theirs.status === "review") && mine.status !== theirs.status) {
    return `it would undo ${theirs.id}'s ${theirs.status} (of ${theirs.updated_at}): this clone's value says ${mine.status}`;
  }
  if (isLive(theirs, at)) {
    const c = theirs.claim!;
    const kept = mine.claim && mine.claim.agent === c.agent && mine.claim.fence === c.fence;
    if (!kept) return `it would remove ${c.agent}'s live claim on ${theirs.id} (fence ${c.fence}, until ${c.expires_at})`;
  }
  return null;
}

function leaseHazard(theirs: readonly Lease[], mine: readonly Lease[], at: Date): string | null {
  const lost = theirs.filter((l) => isLeaseLive(l, at) && !mine.some((m) => m.agent === l.agent && m.pattern === l.pattern && m.exclusive === l.exclusive && isLeaseLive(m, at)));
  if (!lost.length) return null;
  const named = lost.slice(0, 3).map((l) => `${l.agent}'s ${l.exclusive ? "exclusive" : "shared"} lease on ${l.pattern} (until ${l.expires_at})`);
  return `it would remove ${lost.length} live lease(s) this clone's set lacks: ${named.join(", ")}${lost.length > 3 ? ", ..." : ""}`;
}

/** The record, or null when it cannot be read (its objects or its record are what was refused). */
async function readable<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch {
    return null;
  }
}
