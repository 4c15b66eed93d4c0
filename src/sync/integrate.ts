// Bringing the local refs/handoff/* in line with what was fetched from the sync remote, per ref:
// fast-forward, keep (local is ahead: push it), or replay the local operations on the remote tip.
import { HandoffError, type Refusal } from "../core/errors.ts";
import { operationName, type HandoffEvent } from "../core/event.ts";
import { isDerivedEvent, replayTaskEvent } from "../core/replay.ts";
import { isFinal, Task } from "../core/task.ts";
import { listRefs, type RefUpdate } from "../git/refs.ts";
import { sameRefs } from "../git/ref-watch.ts";
import type { Tips } from "./tracking.ts";
import { ARCHIVE_REF, archivedTipsFrom } from "../store/archive.ts";
import { eventFromMessage, readRecord, writeSteps } from "../store/codec.ts";
import { commitsSince, isAncestor, readCommit } from "../store/history.ts";
import type { Conflict } from "./local-area.ts";
import { REF_ROOT, type Store } from "../store/store.ts";
import { readTaskAt, TASKS_PREFIX } from "../store/task-store.ts";
import { viewGraceMs } from "../store/check-context.ts";
import { LEASES_REF, leaseUpdate, readLeasesAt } from "../store/lease-store.ts";
import { EMPTY_LEASES, isLeaseLive, type Lease, type LeaseSet } from "../core/lease.ts";
import { formatDuration } from "../core/duration.ts";
import { replayLeaseWrite, tasksTouched } from "../core/lease-replay.ts";
import { GRANT_MATCH_BUDGET } from "../core/match-budget.ts";
import { AGENT_LOG_REF } from "../store/agent-gc.ts";
import { failOnStaleLock } from "../store/stale-lock.ts";
import { eventTime, layVersions } from "./lay-versions.ts";
import { validateReceived } from "./validate-receive.ts";
import { groupDigits } from "../core/digits.ts";

export { trackingTips, type Tips } from "./tracking.ts";

export async function localTips(store: Store): Promise<Tips> {
  // In-process when refs are files: no git spawn for a listing every refresh makes.
  return new Map((await (store.usesRefFiles ? store.listRefs(REF_ROOT) : listRefs(store.storeCwd, REF_ROOT))).map((t) => [t.name, t.oid]));
}

export interface Integration {
  /** Refs where local has commits the remote lacks: push them with the remote value as lease. */
  ahead: { ref: string; local: string; expected: string | null }[];
  fastForwarded: string[];
  replayed: string[];
  removed: string[];
  conflicts: Conflict[];
  /** Local commits replaced by their replayed copies. */
  rewritten: Map<string, string>;
  /** The local refs once applied (read only: it may be the map the caller passed). */
  local: Tips;
}

/**
 * Applies the fetched state: `before` is the tracking state before the fetch (to tell a ref the
 * remote deleted, after compaction elsewhere, from one it never had), `after` the state now.
 */
export async function integrate(store: Store, before: Tips, after: Tips, known?: Tips): Promise<Integration> {
  for (let round = 0; ; round++) {
    const local = round === 0 && known ? known : await localTips(store);
    // The usual sync of a quiet team: every ref here is what the remote has. Said without the
    // walk below over both sides' names (10,000 at 5,000 tasks), and without a copy of them:
    // nothing changes `local` then (callers only read an integration's `local`).
    if (sameRefs(local, after)) return { ahead: [], fastForwarded: [], replayed: [], removed: [], conflicts: [], rewritten: new Map(), local };
    const out: Integration = { ahead: [], fastForwarded: [], replayed: [], removed: [], conflicts: [], rewritten: new Map(), local: new Map(local) };
    const updates: RefUpdate[] = [];
    // The lease set last: its replay follows each task's state as this sync leaves it.
    const names = [...new Set([...local.keys(), ...after.keys()])].sort((x, y) => Number(x === LEASES_REF) - Number(y === LEASES_REF));
    let archived: Map<string, string> | null = null;
    for (const ref of names) {
      const L = local.get(ref) ?? null;
      const T = after.get(ref) ?? null;
      const B = before.get(ref) ?? null;
      if (L === T) continue;
      if (L === null) {
        updates.push({ ref, new: T, old: null });
        out.fastForwarded.push(ref);
      } else if (T === null) {
        // Gone from the remote: compacted there (its history is in the remote's archive) or
        // deleted; or never pushed yet. Only the last is pushed.
        const id = ref.startsWith(TASKS_PREFIX) ? ref.slice(TASKS_PREFIX.length) : null;
        const archivedTip = id && after.has(ARCHIVE_REF) ? (archived ??= await archiveEntries(store, after.get(ARCHIVE_REF)!)).get(id) : undefined;
        const compacted = archivedTip !== undefined && (await archivedFrom(store, ref, L, archivedTip));
        // A task deleted there but not archived: compaction archives every task it removes, and
        // only finished ones, so a live task gone by hand (or by a remote that lost it) is put back
        // rather than lost in every clone; so is a ref no operation ever deletes (the lease set,
        // the archive, the gc log). The remote is shared storage, not an authority here.
        const deletedThere = B !== null && !NEVER_DELETED.has(ref) && (await isAncestor(store, L, B, ref));
        if (compacted || (deletedThere && !(id !== null && (await liveHere(store, ref, L))))) {
          updates.push({ ref, new: null, old: L }); // compacted (or deleted) on the remote
          out.removed.push(ref);
        } else out.ahead.push({ ref, local: L, expected: null });
      } else if (await isAncestor(store, T, L, ref)) {
        out.ahead.push({ ref, local: L, expected: T });
      } else if (await isAncestor(store, L, T, ref)) {
        updates.push({ ref, new: T, old: L });
        out.fastForwarded.push(ref);
      } else if (B !== null && (L === B || (await isAncestor(store, L, B, ref)))) {
        // Nothing here the remote did not have: its writer replaced that, knowing it (only an
        // agent's own ref is written so: a heartbeat replaces its parent). Take the remote's;
        // replaying would put a version its writer superseded back on top, from every clone.
        updates.push({ ref, new: T, old: L });
        out.fastForwarded.push(ref);
      } else {
        const replay = await replayRef(store, ref, L, T, new Map(), (id) => finishedAfter(store, id, updates, local));
        out.conflicts.push(...replay.conflicts);
        for (const [a, b] of replay.rewritten) out.rewritten.set(a, b);
        updates.push({ ref, new: replay.tip, old: L });
        // Nothing laid on the remote's line (every local version older than the remote's, every
        // local step derived): the remote's value was taken, and the report says so.
        if (replay.tip === T && !replay.conflicts.length) out.fastForwarded.push(ref);
        else out.replayed.push(ref);
        if (replay.tip !== T) out.ahead.push({ ref, local: replay.tip, expected: T });
      }
    }
    if (!updates.length) return out;
    const r = await store.updateRefs(updates);
    if (r.ok) {
      for (const u of updates) u.new === null ? out.local.delete(u.ref) : out.local.set(u.ref, u.new);
      return out;
    }
    if (r.reason === "locked") failOnStaleLock(store.repo.storeDir, r.message);
    if (round >= 5) throw new HandoffError({ code: "lost_race", message: `could not apply fetched state: ${r.message}; try again` });
    // A local writer moved a ref meanwhile: start over from the refs as they are now.
  }
}

/** The archive's entries; an archive that cannot be read vouches for no task. */
async function archiveEntries(store: Store, tip: string): Promise<Map<string, string>> {
  try {
    return await archivedTipsFrom(store, tip);
  } catch {
    return new Map();
  }
}

/**
 * Whether the archive's `tip` for the task at `ref` is where the task this clone holds at `L`
 * ended: a commit here, the task's final record, reached from L by legal steps (as receive judges
 * them). Anything else is only the archive's word: the task is kept, and pushed back.
 */
async function archivedFrom(store: Store, ref: string, L: string, tip: string): Promise<boolean> {
  try {
    if (!(await validateReceived(store, ref, tip, L, store.now())).ok) return false;
    return isFinal((await readTaskAt(store, ref, tip)).status);
  } catch {
    return false;
  }
}

/** Refs no operation deletes: gone from the remote, they were lost there, not removed on purpose. */
const NEVER_DELETED = new Set([LEASES_REF, ARCHIVE_REF, AGENT_LOG_REF]);

/** Whether the task record at `tip` is not finished; a record that cannot be read counts as finished (cancel --force removes such refs). */
async function liveHere(store: Store, ref: string, tip: string): Promise<boolean> {
  try {
    return !isFinal((await readTaskAt(store, ref, tip)).status);
  } catch {
    return false;
  }
}

/**
 * Whether task `id` is finished once `updates` are applied to `local`: a task ref this sync removes
 * was compacted or deleted, both only done to finished tasks; one that no side has is not.
 */
async function finishedAfter(store: Store, id: string, updates: RefUpdate[], local: Tips): Promise<boolean> {
  const ref = `${TASKS_PREFIX}${id}`;
  const update = updates.find((u) => u.ref === ref);
  const tip = update ? update.new : (local.get(ref) ?? null);
  if (tip === null) return update !== undefined;
  return !(await liveHere(store, ref, tip));
}

/**
 * Replays the local commits of one ref on the remote tip. Task operations go back through the
 * pure task operations (a claim another clone won comes back refused), and so do the lease set's
 * writes (replayLeases: every agent writes that one ref); a memory's, a document's or the loop's
 * own versions are laid on top of the remote line (both sides stay in the history), an agent's
 * only those later than the remote's (an agent's record is its latest declaration: lay-versions.ts).
 * `refused`: local commits of a task ref that are not replayed, with why (a dependency that would
 * close a cycle across clones, dependency-cycles.ts): each becomes a conflict like a refused replay.
 * `finished`: whether a task is finished once this sync is applied (the lease set's replay keeps
 * no lease of one).
 */
export async function replayRef(
  store: Store,
  ref: string,
  local: string,
  remote: string,
  refused: ReadonlyMap<string, Refusal> = new Map(),
  finished: (task: string) => Promise<boolean> = async () => false,
): Promise<{ tip: string; conflicts: Conflict[]; rewritten: Map<string, string> }> {
  if (ref === LEASES_REF) return replayLeases(store, ref, local, remote, finished);
  const { commits } = await commitsSince(store, remote, local, ref);
  if (!ref.startsWith(TASKS_PREFIX)) return { ...(await layVersions(store, ref, commits, remote)), conflicts: [] };
  // The grace this clone's writes honour (the write context's): a write replayed here takes over
  // nothing it would have been refused had the other agent's claim arrived before it was made.
  const takeoverGraceMs = await viewGraceMs(store);
  const conflicts: Conflict[] = [];
  const rewritten = new Map<string, string>();
  let tip = remote;
  let task = (await readRecord(store.reader, store.oidBytes, remote, ref, "task.json", Task)).record;
  let previous: HandoffEvent | null = null;
  let previousRecord: Task | null = null;
  for (const oid of commits) {
    const { record: recorded, commit } = await readRecord(store.reader, store.oidBytes, oid, ref, "task.json", Task);
    const event = eventFromMessage(commit.message);
    const [prev, prevRecord] = [previous, previousRecord];
    [previous, previousRecord] = [event, recorded];
    if (!event || isDerivedEvent(event, prev, prevRecord)) continue;
    const why = refused.get(oid);
    const out = why ? ({ ok: false, refusal: why } as const) : event.type === "created" ? null : replayTaskEvent(task, event, recorded, { takeoverGraceMs });
    if (out && out.ok) {
      if (out.steps.length) tip = writeSteps(store, tip, "task.json", out.steps);
      task = out.record;
      rewritten.set(oid, tip);
      continue;
    }
    const refusal = out && !out.ok ? out.refusal : { code: "exists" as const, message: `task ${task.id} was created on the remote too (by ${task.created_by}); the local creation was dropped`, data: {} };
    const holder = typeof refusal.data?.holder === "string" ? refusal.data.holder : task.claim?.agent;
    conflicts.push({
      ref,
      task: task.id,
      agent: event.by ?? event.agent,
      event,
      commit: oid,
      code: refusal.code,
      message: `${operationName(event.type)} of ${task.id} by ${event.by ?? event.agent} at ${event.at} no longer applies: ${refusal.message}`,
      ...(holder ? { holder } : {}),
      detected_at: store.now().toISOString(),
    });
  }
  return { tip, conflicts, rewritten };
}

/**
 * The local writes of the lease set, replayed on the remote's set one by one as what each changed
 * (core/lease-replay.ts): leases another clone pushed stay, and a lease added here that a live
 * lease of another agent now clashes with is a conflict for its agent (a tentative offline lease is
 * then refused), never a second exclusive holder. A lease of a task `finished` once synced is not
 * kept, whichever clone renewed it.
 */
async function replayLeases(
  store: Store,
  ref: string,
  local: string,
  remote: string,
  finished: (task: string) => Promise<boolean>,
): Promise<{ tip: string; conflicts: Conflict[]; rewritten: Map<string, string> }> {
  const { base, commits } = await commitsSince(store, remote, local, ref);
  const conflicts: Conflict[] = [];
  const rewritten = new Map<string, string>();
  let tip = remote;
  let onto = (await readLeasesAt(store, remote)).set;
  let parent = base ? (await readLeasesAt(store, base)).set : EMPTY_LEASES;
  let after = await eventTime(store, remote, ref);
  const seen = new Map<string, Promise<boolean>>();
  const finishedOnce = (id: string) => seen.get(id) ?? seen.set(id, finished(id)).get(id)!;
  // As for task replays above; receive validation judges a received commit by its writer's clock, without it.
  const grace = await viewGraceMs(store);
  for (const oid of commits) {
    const written = (await readLeasesAt(store, oid)).set;
    const event = eventFromMessage((await readCommit(store, oid, ref)).message);
    const from = parent;
    parent = written;
    if (!event) continue; // not a write of ours: nothing to replay
    const at = new Date(Math.max(Date.parse(event.at), after));
    const actor = event.by ?? event.agent;
    const ended = new Set<string>();
    for (const id of tasksTouched(from, written)) if (await finishedOnce(id)) ended.add(id);
    const r = replayLeaseWrite(onto, from, written, actor, at, ended, grace);
    for (const { lease, clash, unchecked } of r.refused) {
      conflicts.push({
        ref,
        ...(lease.task ? { task: lease.task } : {}),
        agent: actor,
        event,
        commit: oid,
        code: unchecked ? "too_costly" : "held_by_other",
        message: unchecked
          ? `${lease.exclusive ? "exclusive " : ""}lease on ${lease.pattern} by ${lease.agent} at ${event.at} no longer applies: it could not be compared with ${clash.agent}'s live lease on ${JSON.stringify(clash.pattern.slice(0, 60))} within the budget of glob matching a grant may do (${groupDigits(GRANT_MATCH_BUDGET)} units)`
          : `${lease.exclusive ? "exclusive " : ""}lease on ${lease.pattern} by ${lease.agent} at ${event.at} no longer applies: it overlaps ${clash.agent}'s live ${clash.exclusive ? "exclusive " : ""}lease on ${clash.pattern}${graceNote(clash, at, grace)}`,
        holder: clash.agent,
        detected_at: store.now().toISOString(),
      });
    }
    if (sameLeases(r.record, onto)) continue; // nothing of it is left to write
    const update = leaseUpdate(store, tip, { ok: true, record: r.record, steps: [{ event: { ...event, at: at.toISOString() }, record: r.record }] });
    if (!update) continue;
    tip = update.new;
    onto = r.record;
    after = at.getTime();
    rewritten.set(oid, tip);
  }
  return { tip, conflicts, rewritten };
}

/** What a clash that stands only for the takeover grace adds to the conflict's message. */
function graceNote(clash: Lease, at: Date, graceMs: number): string {
  if (isLeaseLive(clash, at)) return "";
  return ` (it expired at ${clash.expires_at} by this clock, but stands ${formatDuration(graceMs)} past its expiry, the takeover grace for clock skew)`;
}

function sameLeases(a: LeaseSet, b: LeaseSet): boolean {
  if (a.leases.length !== b.leases.length) return false;
  const seen = new Set(a.leases.map((l) => JSON.stringify(l)));
  return b.leases.every((l) => seen.has(JSON.stringify(l)));
}
