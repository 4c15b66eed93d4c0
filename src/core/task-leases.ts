// A lease taken for a task lives as long as the task is being worked on: the claim's scope leases
// and every `lease --task` lease end in the same transaction as the claim, and last exactly as
// long as it. Pure: the lease set and the task as it now stands -> lease steps.
import { groupDigits } from "./digits.ts";
import type { HandoffEvent } from "./event.ts";
import type { Lease, LeaseSet } from "./lease.ts";
import { keepOrder } from "./lease-order.ts";
import { leasesOfTask } from "./lease-groups.ts";
import { SPENT, withinBudget } from "./match-budget.ts";
import { namedFew } from "./named-few.ts";
import type { Outcome } from "./outcome.ts";
import { handoffCommand } from "./shell-quote.ts";
import type { OpContext } from "./task-ops.ts";
import type { Task } from "./task.ts";

/** The claim a task's leases may live on: claimed, not expired. */
function liveClaim(task: Task, now: Date) {
  const c = task.claim;
  return task.status === "claimed" && c && Date.parse(c.expires_at) > now.getTime() ? c : null;
}

/**
 * Makes the lease set agree with `task`: leases of the task held by anyone but the live claim's
 * holder end (task finished, released, in review, expired, reclaimed or taken over), and the
 * holder's leases of the task expire with the claim (extending a claim extends them too).
 */
export function followTask(set: LeaseSet, task: Task, ctx: OpContext): Outcome<LeaseSet> {
  const claim = liveClaim(task, ctx.now);
  const ofTask = leasesOfTask(set.leases, task.id);
  if (!ofTask.length) return { ok: true, record: set, steps: [] };
  const gone = ofTask.filter((l) => !claim || l.agent !== claim.agent);
  const ended = endTaskLeases(set, task.id, gone, ctx);
  const steps = [...ended.steps];
  let leases = ended.record.leases;
  const { agent, scope, worktree, branch } = ctx.actor;
  const at = ctx.now.toISOString();
  if (claim) {
    const stale = ofTask.filter((l) => !gone.includes(l) && l.expires_at !== claim.expires_at);
    if (stale.length) {
      leases = keepOrder(leases, leases.map((l) => (stale.includes(l) ? { ...l, expires_at: claim.expires_at, ttl_ms: claim.ttl_ms } : l)));
      const event: HandoffEvent = { type: "leased", task: task.id, agent, at, scope, worktree, branch, paths: stale.map((l) => l.pattern), expires_at: claim.expires_at };
      steps.push({ event, record: { leases } });
    }
  }
  return { ok: true, record: { leases }, steps };
}

/**
 * Ends `gone` (leases serving task `id`) in one step, logged as `unleased` by the actor, naming
 * their holder when that is one other agent: followTask's ending, and doctor --repair's.
 */
export function endTaskLeases(set: LeaseSet, id: string, gone: readonly Lease[], ctx: OpContext): Outcome<LeaseSet> & { ok: true } {
  if (!gone.length) return { ok: true, record: set, steps: [] };
  const leases = keepOrder(set.leases, set.leases.filter((l) => !gone.includes(l)));
  const { agent, scope, worktree, branch } = ctx.actor;
  const event: HandoffEvent = { type: "unleased", task: id, agent, at: ctx.now.toISOString(), scope, worktree, branch, paths: gone.map((l) => l.pattern) };
  const holders = [...new Set(gone.map((l) => l.agent))];
  if (holders.length === 1 && holders[0] !== agent) event.holder = holders[0]!;
  return { ok: true, record: { leases }, steps: [{ event, record: { leases } }] };
}

/** Drops every lease of `agent` and of `tasks` (garbage collection of a silent agent). */
export function dropAgentLeases(set: LeaseSet, gone: string, tasks: string[], ctx: OpContext): Outcome<LeaseSet> {
  const drop = set.leases.filter((l) => l.agent === gone || (l.task !== null && tasks.includes(l.task)));
  if (!drop.length) return { ok: true, record: set, steps: [] };
  const leases = keepOrder(set.leases, set.leases.filter((l) => !drop.includes(l)));
  const { agent, scope, worktree, branch } = ctx.actor;
  const event: HandoffEvent = { type: "unleased", task: "", agent, at: ctx.now.toISOString(), scope, worktree, branch, holder: gone, paths: drop.map((l) => l.pattern), by: agent };
  return { ok: true, record: { leases }, steps: [{ event, record: { leases } }] };
}

/** Whether a third of the claim's time has passed: the next write by its holder extends it. */
export function claimExtensionDue(task: Task, agent: string, now: Date): boolean {
  const c = liveClaim(task, now);
  if (!c || c.agent !== agent) return false;
  return Date.parse(c.expires_at) - now.getTime() < (c.ttl_ms * 2) / 3;
}

/**
 * The tasks of own leases `covers` (a write touched them) whose claim is due for extension, by lease
 * expiry, and the tasks it could not tell: `covers` spends a budget of matching (match-budget.ts),
 * and a task none of whose looked-at leases it covers, with some not looked at, is `unchecked`:
 * not extended, so that no claim is kept alive by a write that may not concern it.
 */
export function dueTaskIds(leases: Lease[], agent: string, now: Date, covers: (l: Lease) => boolean): { ids: string[]; unchecked: string[] } {
  const due = leases
    .filter((l) => l.agent === agent && l.task !== null && Date.parse(l.expires_at) > now.getTime())
    .filter((l) => Date.parse(l.expires_at) - now.getTime() < (l.ttl_ms * 2) / 3);
  const ids = new Set<string>();
  const unchecked = new Set<string>();
  for (const l of due) {
    if (ids.has(l.task!)) continue;
    const hit = withinBudget(() => covers(l));
    if (hit === SPENT) unchecked.add(l.task!);
    else if (hit) ids.add(l.task!);
  }
  return { ids: [...ids], unchecked: [...unchecked].filter((t) => !ids.has(t)) };
}

/** What a write says of the claims it did not extend because it could not look at their leases within `units` (`whose`: "one check", "a grant"). */
export function unextendedNote(tasks: string[], units: number, whose: string): string {
  return `did not extend your claim on ${namedFew(tasks, 5)}: its leases' globs took more than the budget of matching ${whose} may do (${groupDigits(units)} units), so some were not looked at; extend it with ${handoffCommand("renew", tasks[0]!)}`;
}

