// Validate on receive, a task's history: each commit on refs/handoff/tasks/<id> is a legal step from
// its parent's state, as the same pure operations decide it, and the first one is the task's
// creation. A clone judges every commit it has not judged before: those on top of the tip it
// validated last, or the whole line from the creation when it first sees the task
// (validate-receive.ts), so a forged past (a second "created" naming other inputs, a finished task
// reopened) is refused on a fresh clone too.
import type { HandoffEvent } from "../core/event.ts";
import { canonicalJson } from "../core/canonical-json.ts";
import { isDerivedEvent, replayTaskEvent } from "../core/replay.ts";
import { bindingReclaim } from "../core/task-ops.ts";
import { taskStepFieldProblem } from "../core/task-step-fields.ts";
import { isFinal, type Task } from "../core/task.ts";
import { CLOCK_SKEW_MS, invalid } from "./receive-refusal.ts";
import type { Entry } from "./received-entry.ts";

const REPLAYED = new Set(["claimed", "renewed", "released", "done", "failed", "cancelled", "reclaimed"]);

/** Who holds what, as far as exclusivity is concerned: what a step may change only legally. */
function holding(t: Task): string {
  return JSON.stringify([t.status, t.claim?.agent ?? null, t.claim?.fence ?? null, t.claim?.expires_at ?? null, t.fence]);
}

/**
 * Whether `rec`'s claim is `prev`'s live claim renewed by its holder: the same claim in every
 * field but its expiry, which moves at most one TTL past the event (as renewTask makes it).
 */
function holderRenewal(prev: Task, rec: Task, actor: string, at: number): boolean {
  const a = prev.claim;
  const b = rec.claim;
  if (!a || !b || a.agent !== actor || Date.parse(a.expires_at) <= at) return false;
  if (canonicalJson({ ...b, expires_at: a.expires_at }) !== canonicalJson(a)) return false;
  return Date.parse(b.expires_at) <= at + a.ttl_ms + CLOCK_SKEW_MS;
}

/**
 * A reclaim of a claim that had run out: the reclaimer's write records the expiry first (its own
 * "expired" commit, at the same instant), then takes the claim that expiry freed (task-ops.ts
 * reclaimTask), which the parent's record no longer holds: replayed on it, the reclaim would find
 * nothing to reclaim. What it must record is that claim, taken by the reclaimer.
 */
function reclaimOfExpired(parent: Entry, ev: HandoffEvent, actor: string): boolean {
  const x = parent.event;
  return ev.type === "reclaimed" && x?.type === "expired" && x.at === ev.at && (x.by ?? x.agent) === actor && ev.holder === x.agent && ev.fence === x.fence;
}

/**
 * A task's first commit is its creation, as createTask writes it: nobody holds it, nothing was
 * tried, finished, handed off or reviewed yet, and its creator wrote it.
 */
function checkCreation(id: string, e: Entry, ev: HandoffEvent, actor: string): void {
  const rec = e.record as Task;
  if (ev.type !== "created") invalid(`the first commit of ${id} (${e.oid.slice(0, 12)}) is a ${ev.type}, not its creation`);
  const fresh = rec.status === "todo" && rec.claim === null && rec.fence === 0 && rec.attempts === 0 && rec.result === null;
  const untouched = !rec.handoffs?.length && !rec.review && !rec.reclaimed && !rec.base;
  if (!fresh || !untouched) invalid(`the creation of ${id} (${e.oid.slice(0, 12)}) records a task that was already worked on`);
  if (rec.created_by !== actor) invalid(`the creation of ${id} is by ${JSON.stringify(actor)} but names ${JSON.stringify(rec.created_by)} as its creator`);
}

/** Task commit `e` is a legal step from `parent` (null: the task's first commit). */
export function checkTaskStep(id: string | null, e: Entry, parent: Entry | null): void {
  const ev = e.event!;
  const actor = ev.by ?? ev.agent;
  const at = Date.parse(ev.at);
  const rec = e.record as Task;
  if (ev.task !== id) invalid(`the event is about ${JSON.stringify(ev.task)}, the ref about ${id}`);
  if (!parent) return checkCreation(id!, e, ev, actor);
  const prev = parent.record as Task;
  if (ev.type === "created") invalid(`a second "created" on ${id}`);
  // A finished task stays as its completion left it: the results commit that completion names is
  // the task's result for every reader (work/handover.ts loadResults), so no later step may
  // reopen the task or name another one.
  if (isFinal(prev.status) && (rec.status !== prev.status || canonicalJson(rec.result) !== canonicalJson(prev.result))) {
    invalid(`${ev.type} by ${actor} changed ${id} after it was ${prev.status}`);
  }
  // Who a reclaim took the task from may not finish it until a new grant (a higher fence) ends
  // the rule: a writer that does not know the field (an older build) drops it, and with it the rule.
  if (bindingReclaim(prev) && ev.type !== "reclaimed" && canonicalJson(rec.reclaimed ?? null) !== canonicalJson(prev.reclaimed)) {
    invalid(`${ev.type} by ${actor} dropped the record that ${prev.reclaimed!.by} reclaimed ${id} from ${prev.reclaimed!.agent}`);
  }
  // Each kind of step changes its own fields only (core/task-step-fields.ts): no step edits what
  // the creator wrote.
  const fields = taskStepFieldProblem(ev.type, prev, rec);
  if (fields) invalid(`${ev.type} by ${actor} on ${id} ${fields}`);
  if (rec.fence < prev.fence) invalid(`the fence went down from ${prev.fence} to ${rec.fence}`);
  if (ev.type === "expired") {
    if (!prev.claim || Date.parse(prev.claim.expires_at) > at || rec.claim !== null || rec.fence !== prev.fence) invalid(`an "expired" by ${actor} on a claim that had not run out`);
    return;
  }
  if (isDerivedEvent(ev, parent.event, prev)) {
    if (rec.claim !== null || rec.status !== "failed") invalid(`a derived "failed" that does not fail the task`);
    return;
  }
  if (reclaimOfExpired(parent, ev, actor)) {
    const taken = { agent: ev.holder, fence: ev.fence, by: actor, at: ev.at };
    if (rec.status !== "todo" || rec.claim !== null || rec.fence !== prev.fence || canonicalJson(rec.reclaimed ?? null) !== canonicalJson(taken)) {
      invalid(`reclaimed by ${actor} recorded a state the operation does not produce`);
    }
    return;
  }
  if (REPLAYED.has(ev.type)) {
    const out = replayTaskEvent(prev, ev, rec, { asMade: true });
    if (!out.ok) invalid(`${ev.type} by ${actor} was not a legal operation: ${out.refusal.message}`);
    if (out.ok && holding(out.record) !== holding(rec)) invalid(`${ev.type} by ${actor} recorded a state the operation does not produce`);
    // The results commit a completion names is the one its event names: the holder's, at its fence.
    if (out.ok && (out.record.result?.results ?? null) !== (rec.result?.results ?? null)) invalid(`${ev.type} by ${actor} records results its event does not name`);
    return;
  }
  // Every other operation (handoffs, dependencies, review) may end a claim, never grant one; the
  // holder's own may renew its live claim (a handoff counts as an update by the holder).
  if (rec.fence !== prev.fence || (rec.claim !== null && canonicalJson(rec.claim) !== canonicalJson(prev.claim) && !holderRenewal(prev, rec, actor, at))) {
    invalid(`${ev.type} by ${actor} changed who holds ${id}`);
  }
}
