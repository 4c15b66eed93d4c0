// Validate on receive, the session loop's record (refs/handoff/loop). What a loop decided when it
// started stays as it decided while the loop keeps its id: its settings (a resumed run takes its
// strategy, --accept, --push, --keep and --max-worktrees from the record) and its planned units,
// each unit's id, tasks, scope, order, wait and agent. Its writers (loop-run.ts, loop-units.ts,
// loop-merge.ts, loop-failed-unit.ts) change the loop's phase and runner, and a unit's phase and
// what its run left (branch, worktree, base, pid, host, starts, times, result, note, kept), never
// these. The runner guards itself with its local plan (.git/handoff/loop-plans/); this keeps every
// other clone's view of the loop the one its runner planned.
// A record with another id is another loop, a new plan that replaces the record whole: `loop run`
// after the last loop ended, or sync laying versions of two loops started in two clones one over
// the other (lay-versions.ts). So this holds from one commit to the next of one loop: a history
// that goes to another id and back names a new loop, as anyone may start one.
import { canonicalJson } from "../core/canonical-json.ts";
import type { LoopRecord, LoopUnit } from "../core/loop-record.ts";
import { invalid } from "./receive-refusal.ts";
import type { Entry } from "./received-entry.ts";

/** The loop's own fields fixed when it starts. */
const SETTINGS = ["integration", "strategy", "accept", "push", "keep", "verify", "max_worktrees", "started_at"] as const;
/** A unit's fields fixed when it is planned. */
const PLAN = ["id", "tasks", "scope", "after", "agent"] as const;

const planOf = (u: LoopUnit) => canonicalJson(PLAN.map((k) => u[k]));

/** Loop commit `e` keeps what `parent`'s loop planned, when it is the same loop. */
export function checkLoopStep(e: Entry, parent: Entry): void {
  const prev = parent.record as LoopRecord;
  const rec = e.record as LoopRecord;
  if (rec.id !== prev.id) return;
  const by = `${e.event!.by ?? e.event!.agent}'s change to loop ${rec.id} (${e.oid.slice(0, 12)})`;
  for (const k of SETTINGS) if (canonicalJson(rec[k]) !== canonicalJson(prev[k])) invalid(`${by} changes its ${k}, fixed when the loop started`);
  const now = new Map(rec.units.map((u) => [u.id, u]));
  for (const u of prev.units) {
    const next = now.get(u.id);
    if (!next) invalid(`${by} removes its planned unit ${u.id}`);
    if (planOf(next!) !== planOf(u)) invalid(`${by} changes its planned unit ${u.id} (its tasks, scope, order or agent)`);
  }
  const planned = new Set(prev.units.map((u) => u.id));
  const added = rec.units.find((u) => !planned.has(u.id));
  if (added) invalid(`${by} adds a unit ${added.id} to a loop already planned`);
  // Units merge in plan order (loop-record.ts mayMerge): the order is part of the plan.
  if (rec.units.some((u, i) => u.id !== prev.units[i]!.id)) invalid(`${by} reorders its planned units`);
}
