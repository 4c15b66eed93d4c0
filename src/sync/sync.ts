// `git handoff sync`: exchange refs/handoff/* with the sync remote. Fetch into the tracking refs,
// apply per ref (fast-forward, keep, replay), push what is ahead in one atomic push with a lease
// per ref, and settle tentative offline grants. A ref the remote's planted names stand in the way
// of is held back, not the whole push (name-clash.ts).
import { fail } from "../core/errors.ts";
import { lstatSync } from "node:fs";
import { ownFolder, touchNoFollow } from "../git/safe-file.ts";
import { acquireOwnedLock } from "../git/owned-lock.ts";
import { namespaceSplit, type NamespaceSplit } from "../git/remote-listing.ts";
import { pushWithLease, sendAgain } from "../git/push-lease.ts";
import { trackingRef } from "../git/tracking-ref.ts";
import { integrate } from "./integrate.ts";
import { refuseCycles } from "./dependency-cycles.ts";
import { listEarly, refreshTracking, type EarlyListing, type Listing } from "./refresh-tracking.ts";
import { snapshot } from "./tracking.ts";
import { forgetQuiet, readQuiet, rememberQuiet, restampQuiet, stillQuiet, syncStamp, type Quiet } from "./quiet-sync.ts";
import { recordSightings } from "./skew.ts";
import { clearTentative, listTentative, readConflicts, recordConflicts, type Conflict, type Tentative } from "./local-area.ts";
import { backoff, refusedByRemote } from "./remote-cas.ts";
import { callTimeout, remoteBudget, remoteFailed, timedOut, unreachable, type RemoteBudget } from "./remote-budget.ts";
import { pushEffect } from "./push-outcome.ts";
import type { Store } from "../store/store.ts";
import { compactIfDue } from "../store/archive.ts";
import { packIfLoose } from "./pack-refs.ts";
import { forgetMovedRemote } from "./tracking-identity.ts";
import type { Quarantined } from "./quarantine.ts";
import { recordRefusedOnReceive } from "./receive-report.ts";
import { trace } from "./trace.ts";
import { clearOfClashes, type NameClash } from "./name-clash.ts";
import { withRepairAdvice, type RepairAdvice } from "./repair-hazard.ts";

export interface SyncReport {
  remote: string;
  fetched: string[];
  pushed: string[];
  replayed: string[];
  removed: string[];
  conflicts: Conflict[];
  confirmed: Tentative[];
  refused: Tentative[];
  rounds: number;
  /** Tasks compacted into refs/handoff/archive by this sync (it compacts when something is due). */
  archived: string[];
  /**
   * Remote refs refused on receive (kind "invalid", with the reason) or from a newer git-handoff
   * (kind "newer"): kept under refs/handoff-remotes/<remote>/ only. `new` marks those first seen now.
   */
  quarantined: (Quarantined & { new: boolean; repair?: RepairAdvice })[];
  /**
   * Refs ahead here that were not pushed because a remote ref refused on receive (`blocker`, one of
   * `quarantined`) stands where git would have to create them; `repair` is the blocker's. Everything
   * else was pushed.
   */
  not_pushed: (NameClash & { repair?: RepairAdvice })[];
  /** Another sync of this clone, begun after this one was asked for, did the work meanwhile. */
  coalesced?: boolean;
  /**
   * The remote's listing and this clone's refs were as the last sync that found nothing to do saw
   * them: nothing was compared, fetched or pushed (quiet-sync.ts).
   */
  unchanged?: boolean;
  /**
   * The remote also holds coordination refs in the other namespace (refs/handoff/ against a branch
   * prefix, ref-prefix.ts): clones that disagree on `--ref-prefix` do not see each other's claims.
   */
  split?: NamespaceSplit;
}

const MAX_ROUNDS = 8;

const NOTHING = new Map<string, string>();

export async function requireRemote(store: Store): Promise<string> {
  const remote = await store.syncRemote();
  if (!remote) {
    fail("not_found", "no sync remote: this repository has no origin and handoff.remote is not set", {}, [
      { action: "fix_input", detail: "choose one: git handoff remote <name>" },
    ]);
  }
  return remote;
}

/** `progress` hears each step as it starts (a person watching a terminal). */
export async function sync(store: Store, o: { progress?: (line: string) => void } = {}): Promise<SyncReport> {
  const say = o.progress ?? (() => {});
  trace("sync: start");
  const remote = await requireRemote(store);
  await forgetMovedRemote(store, remote);
  const report: SyncReport = { remote, fetched: [], pushed: [], replayed: [], removed: [], conflicts: [], confirmed: [], refused: [], rounds: 0, archived: [], quarantined: [], not_pushed: [] };
  const budget = await remoteBudget(store, remote);
  // One sync at a time per clone and remote: the agents of one clone share its refs, so two syncs
  // at once would push the same writes and make each other's leases lose (a soak's three agents a
  // clone pushed 1.7 times per sync). The one that waited finds the writes pushed and pushes
  // nothing. A holder that is gone is broken at once; one that is not, only waited on until the
  // budget ends, then the sync goes ahead anyway (the pushes' leases keep it safe).
  const dir = `${store.repo.commonDir}/handoff`;
  ownFolder(dir);
  const asked = Date.now();
  // A sync with nothing new only reads (the listing, this clone's refs, the quiet record), so it is
  // answered before the lock: what another sync of this clone is doing meanwhile shows in either
  // (a fetch moves the tracking refs, a push the listing), and the lock cost a file's creation,
  // link and removal on every one (0.3-0.6 ms of a one-shot sync with nothing new, A/B).
  const pre = quietFirst(store, remote, budget);
  if (await settledQuiet(store, remote, pre, report, say)) return withSplit(store, remote, report);
  const turn = await acquireOwnedLock(`${dir}/sync-${remote}.lock`, budget.until);
  try {
    // A sync that began after this one was asked for, and succeeded, read this clone's refs after
    // every write made before the ask and pushed what was ahead: there is nothing left to do (as
    // with a fetch that waited for another, fetch-lock.ts withFetchLock).
    const stamp = `${dir}/sync-${remote}.done`;
    if (turn.ok && lastSyncStart(stamp) > asked) {
      report.coalesced = true;
      say(`another sync of this clone that began after this one was asked for just synced with ${remote}`);
      return report;
    }
    const began = new Date();
    // What was read before the turn goes on to the sync, which reads the listing again if this
    // clone's refs moved since (syncHeld); a turn waited for, the listing is read after it: the
    // sync marks the clone synced as of `began`, and a sync asked before that, maybe after
    // another clone's push the old listing missed, goes by its work (coalesced, above).
    const kept = turn.ok && !turn.contended ? pre : undefined;
    const done = await syncHeld(store, remote, budget, report, say, kept);
    // Synced as of what it went by: a listing read before the turn, as of when it was asked for
    // (answered late over a slow link, it may miss a push made before the turn was taken).
    if (turn.ok) markSynced(stamp, kept ? new Date(asked) : began);
    return withSplit(store, remote, done);
  } finally {
    if (turn.ok) turn.release();
  }
}

/** When the last successful sync of this clone began (the stamp's mtime), or 0. */
function lastSyncStart(stamp: string): number {
  try {
    return lstatSync(stamp).mtimeMs;
  } catch {
    return 0;
  }
}

function markSynced(stamp: string, began: Date): void {
  try {
    touchNoFollow(stamp, began);
  } catch {
    /* the next sync that waited does its own */
  }
}

/** What a sync reads first: the remote's listing (started) and this clone's refs' stamp. */
interface FirstLook {
  early: EarlyListing;
  stamp: string | null;
  quiet: Quiet | null;
}

function quietFirst(store: Store, remote: string, budget: RemoteBudget): FirstLook {
  // The last sync that found nothing to do (quiet-sync.ts): a remote on this disk whose ref files
  // are as that sync's listing found them answers with that listing, unread.
  const quiet = readQuiet(store, remote);
  // The remote's list is asked for before this clone's refs are read, which happens while it
  // answers. The listing's git starts once its ref prefix is awaited, and a one-shot process reads
  // the local refs synchronously: without a turn of the event loop between, the two ran one after
  // the other (10 ms of refs, then the listing, at 1,000 tasks). A warm store's listing yields a
  // turn itself; one more there would let its background file work run inside this sync.
  const early = listEarly(store, remote, budget, quiet?.remoteStamp !== undefined ? { text: quiet.listing, stamp: quiet.remoteStamp } : undefined);
  // A look taken before a lock that turns out contended is dropped unread: its failure is no one's.
  early.listing.catch(() => {});
  // What this clone's refs are before anything is read: that sync may have seen them so.
  const stamp = syncStamp(store, remote);
  return { early, stamp, quiet: stamp === null ? null : quiet };
}

/** Whether the look finds what the last sync that found nothing to do found; the report says so. */
async function settledQuiet(store: Store, remote: string, look: FirstLook, report: SyncReport, say: (line: string) => void): Promise<boolean> {
  const { quiet, stamp } = look;
  if (!quiet || stamp === null || quiet.stamp !== stamp) return false;
  const ls = await look.early.listing;
  if (!ls.ok || !stillQuiet(store, quiet, stamp, ls)) return false;
  restampQuiet(store, remote, quiet, ls.stamp);
  report.rounds = 1;
  report.unchanged = true;
  await recordSightings(store, remote, NOTHING, NOTHING);
  say(`nothing new on ${remote} or here since the last sync`);
  say(`nothing to push to ${remote}`);
  trace("sync: done (nothing new)");
  return true;
}

function withSplit(store: Store, remote: string, report: SyncReport): SyncReport {
  const split = namespaceSplit(store.storeCwd, remote);
  return split ? { ...report, split } : report;
}

async function syncHeld(store: Store, remote: string, budget: RemoteBudget, report: SyncReport, say: (line: string) => void, look?: FirstLook): Promise<SyncReport> {
  const rewritten = new Map<string, string>();
  let seen = look;
  if (!seen) {
    seen = quietFirst(store, remote, budget);
    if (await settledQuiet(store, remote, seen, report, say)) return report;
  }
  const { early, stamp, quiet } = seen;
  if (!store.warm) await new Promise((r) => setImmediate(r));
  const first = await snapshot(store, remote);
  trace("sync: local refs read");
  // The listing was asked for before this clone's refs were read (and before the turn, when it
  // was free). A ref moved in between leaves it older than the tracking refs the refresh judges
  // by, and a remote value older than its tracking ref reads as rewritten history: the sync that
  // held the turn may have pushed, or another process's claim pushed through the remote, neither
  // leaving a fetch's mark. Refs moved since the stamp: the listing is asked for again.
  const listed = stamp !== null && syncStamp(store, remote) !== stamp ? undefined : early;
  const tentative = first.tentative ? await listTentative(store) : [];
  let localAfter: Map<string, string> | undefined;
  let listing: Listing | undefined;
  let sentAgain = false;
  for (;;) {
    report.rounds++;
    say(report.rounds === 1 ? `fetching refs/handoff/* from ${remote}` : `fetching again from ${remote} (round ${report.rounds})`);
    const f = await refreshTracking(store, remote, report.rounds === 1 ? first.tracking : undefined, budget, report.rounds === 1 ? listed : undefined);
    if (!f.ok) remoteFailed(budget, f, "sync");
    if (report.rounds === 1) listing = f.listing;
    trace("sync: remote listed (and fetched)");
    const fresh = new Set(f.newlyRefused.map((q) => q.ref));
    for (const q of f.refused) {
      const seen = report.quarantined.find((x) => x.ref === q.ref);
      if (seen) seen.new ||= fresh.has(q.ref);
      else report.quarantined.push({ ...q, new: fresh.has(q.ref) });
    }
    const step = await integrate(store, f.before, f.after, report.rounds === 1 ? first.local : undefined);
    localAfter = step.local;
    trace("sync: integrated");
    report.fetched.push(...step.fastForwarded);
    report.replayed.push(...step.replayed);
    report.removed.push(...step.removed);
    report.conflicts.push(...step.conflicts);
    for (const [a, b] of step.rewritten) rewritten.set(a, b);
    if (step.fastForwarded.length || step.replayed.length) say(`took ${step.fastForwarded.length} ref(s) from ${remote}, replayed ${step.replayed.length} local change(s) on top`);
    // Dependencies added here meet the remote's graph: an edge closing a cycle is refused.
    const cycles = await refuseCycles(store, step.ahead, f.after);
    report.conflicts.push(...cycles.conflicts);
    report.not_pushed = [];
    if (!cycles.ahead.length) {
      say(`nothing to push to ${remote}`);
      break;
    }
    const ahead = cycles.ahead.map((a) => ({ ref: a.ref, new: a.local, expected: a.expected }));
    // A ref kept back by name makes git refuse a push of the ref it shadows, and an atomic push with
    // it: that ref stays here, said so, and the rest goes out (not retried as a lost race).
    const checks = cycles.checks.filter((c) => !ahead.some((o) => o.ref === c.ref));
    const clear = clearOfClashes(remote, ahead, checks, report.quarantined.map((q) => q.ref));
    report.not_pushed = clear.blocked;
    const own = clear.own;
    if (!own.length) {
      say(`nothing to push to ${remote} but ${report.not_pushed.length} ref(s) a ref planted there stands in the way of`);
      break;
    }
    const leases = [...own, ...checks];
    say(`pushing ${own.length} ref(s) to ${remote}`);
    const push = await pushWithLease(store.storeCwd, remote, leases, callTimeout(budget), store.actor.agent, store.remoteSource);
    if (push.kind === "unsent") remoteFailed(budget, { ok: false, message: push.message, timedOut: push.timedOut }, "sync");
    const unknown = push.kind === "unknown" || [...push.status.values()].includes("unknown");
    if (unknown) {
      const why = push.kind === "unknown" ? push.message : "the remote did not report the result";
      if ((await pushEffect(store, budget, leases, why)) === "not_landed") {
        // Dropped on a kept connection (push-lease.ts sendAgain): the round goes again, once.
        if (sendAgain(push, sentAgain) && report.rounds < MAX_ROUNDS) {
          sentAgain = true;
          continue;
        }
        if (push.kind === "unknown" && push.timedOut) timedOut(budget, "the push was stopped and did not land");
        unreachable(remote, `${why}; the push did not land`, "sync");
      }
    } else refusedByRemote(remote, leases, push);
    if (unknown || (push.kind === "done" && [...push.status.values()].every((s) => s === "ok"))) {
      // The fetch of the next sync would say the same; saying it now keeps the leases exact.
      const r = await store.updateRefs(leases.map((l) => ({ ref: trackingRef(remote, l.ref), new: l.new, old: l.expected })));
      void r; // a concurrent fetch may have written them first, to the same values
      report.pushed.push(...own.map((l) => l.ref));
      localAfter = undefined; // replays changed local refs after integrate's view: list them afresh
      break;
    }
    if (report.rounds >= MAX_ROUNDS) {
      fail("lost_race", `sync kept losing races for ${leases.length} ref(s) on ${remote}; run it again`, { remote });
    }
    await new Promise((r) => setTimeout(r, backoff(report.rounds)));
  }
  if (report.conflicts.length) await recordConflicts(store, report.conflicts);
  await recordRefusedOnReceive(store, remote, report.quarantined.filter((q) => q.new));
  // Each ref kept back says what repairs it, in --json as in the text (repair-hazard.ts).
  if (report.quarantined.length) {
    report.quarantined = await withRepairAdvice(store, report.quarantined);
    report.not_pushed = report.not_pushed.map((b) => ({ ...b, repair: report.quarantined.find((q) => q.ref === b.blocker)?.repair }));
  }

  // Offline grants are settled now: refused if their replay conflicted, else they are on the remote,
  // unless their ref was held back (still tentative: the next sync after the repair settles it).
  const refusedCommits = new Set([...report.conflicts, ...(tentative.length ? await readConflicts(store) : [])].map((c) => c.commit));
  const held = new Set(report.not_pushed.map((b) => b.ref));
  const settled = tentative.filter((t) => refusedCommits.has(t.commit) || !held.has(t.ref));
  for (const t of settled) (refusedCommits.has(t.commit) ? report.refused : report.confirmed).push(t);
  await clearTentative(store, settled);
  report.fetched = [...new Set(report.fetched)];
  trace("sync: conflicts and offline grants settled");
  report.archived = (await compactIfDue(store, localAfter))?.archived ?? [];
  trace("sync: compaction checked");
  // Thousands of loose refs slow the user's own `git fetch`: pack them (pack-refs.ts).
  const packed = await packIfLoose(store);
  const nothingDone =
    report.rounds === 1 &&
    !tentative.length &&
    !packed &&
    [report.fetched, report.pushed, report.replayed, report.removed, report.conflicts, report.archived, report.quarantined].every((l) => !l.length);
  // Remembered only if no one moved a ref meanwhile: the stamp is of the refs this sync went by.
  if (nothingDone && listing && stamp !== null && syncStamp(store, remote) === stamp) rememberQuiet(store, remote, stamp, listing);
  else if (quiet) forgetQuiet(store, remote);
  trace("sync: done");
  return report;
}
