// The advisory a claim gives: where the claimed task's scope meets other live work (other agents'
// live tasks' scopes, other agents' leases). Never a refusal: exclusive leases keep blocking as
// they always did; this says who else is near. Through a sync remote, another agent's claim or
// lease expired by this clock stands for the takeover grace (clock-skew.ts), as for a write: near
// work until then. Pure.
import { overlapWitness } from "./glob-overlap.ts";
import { claimLive } from "./clock-skew.ts";
import { isLeaseLiveFor, type Lease } from "./lease.ts";
import { BUDGET_NOTE, newMatchBudget, SPENT, withinBudget } from "./match-budget.ts";
import { groupKey, leasesNear, plainKey } from "./lease-groups.ts";
import type { ClaimedTask } from "./capacity.ts";
import type { Task } from "./task.ts";
import { textOrder } from "./text-order.ts";

/** `warn`: both name the same file or the same pattern; `info`: any other intersection. */
export interface Overlap {
  /** The other task, or null for a lease taken for no task. */
  task: string | null;
  agent: string;
  /** The other side's pattern. */
  pattern: string;
  /** The claimed task's scope glob it meets. */
  scope: string;
  verdict: "warn" | "info";
  /** Not looked at: the budget of glob matching ran out first (match-budget.ts), so it may overlap (`warn`). */
  unchecked?: true;
}

/** `graceMs`: the takeover grace other agents' expired claims and leases stand for (0 without a sync remote). */
export function claimOverlaps(claimed: Task, tasks: readonly ClaimedTask[], leases: Lease[], agent: string, now: Date, graceMs = 0): Overlap[] {
  const out: Overlap[] = [];
  const seen = new Set<string>();
  // Bounded as a check is (match-budget.ts): past it, what is left is listed as a possible overlap.
  const work = newMatchBudget();
  const add = (task: string | null, who: string, pattern: string) => {
    for (const scope of claimed.scope) {
      const witness = withinBudget(() => overlapWitness(scope, pattern, work));
      if (witness === null) continue;
      const unchecked = witness === SPENT;
      const key = `${task}\0${who}\0${pattern}\0${scope}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ task, agent: who, pattern, scope, verdict: unchecked || scope === pattern ? "warn" : "info", ...(unchecked ? { unchecked: true as const } : {}) });
    }
  };
  const scopeKeys = claimed.scope.map(groupKey);
  // A scope key that is not a plain folder name is near every pattern; else a pattern is near when
  // its key is one of the scope's or is itself not plain (keysApart).
  const anyNear = scopeKeys.some((k) => !plainKey(k));
  const keySet = new Set(scopeKeys);
  const isNear = (key: string) => anyNear || keySet.has(key) || !plainKey(key);
  for (const t of tasks) {
    const c = t.claim;
    if (t.id === claimed.id || t.status !== "claimed" || !c || c.agent === agent || !t.scope.length) continue;
    // Most claimed tasks work in other folders: told apart by their first folder, before any glob
    // is matched or any expiry parsed (a thousand live claims were all looked at by every claim),
    // with each task's keys worked out once, not at every claim.
    const keys = scopeKeysOf(t);
    if (!keys.some(isNear)) continue;
    if (!claimLive(c.expires_at, graceMs, now)) continue;
    for (let i = 0; i < keys.length; i++) if (isNear(keys[i]!)) add(t.id, c.agent, t.scope[i]!);
  }
  // Each scope glob meets only the leases near it (lease-groups.ts); a lease near two of them is
  // looked at in the set's order all the same, so the answer is the one a walk of every lease gives.
  const near = claimed.scope.length === 1 ? leasesNear(leases, claimed.scope[0]!) : nearAny(leases, claimed.scope);
  for (const l of near) {
    if (l.agent === agent || !isLeaseLiveFor(l, now, agent, graceMs) || l.task === claimed.id) continue;
    add(l.task, l.agent, l.pattern);
  }
  return out.sort((a, b) => (a.verdict === b.verdict ? 0 : a.verdict === "warn" ? -1 : 1) || textOrder(a.pattern, b.pattern));
}

/** Each scope pattern's groupKey, by task record (records are never mutated once read). */
const keysByTask = new WeakMap<ClaimedTask, string[]>();

function scopeKeysOf(t: ClaimedTask): string[] {
  let keys = keysByTask.get(t);
  if (!keys) keysByTask.set(t, (keys = t.scope.map(groupKey)));
  return keys;
}

/** The leases near any of `patterns`, in the set's order. */
function nearAny(leases: Lease[], patterns: string[]): readonly Lease[] {
  const wanted = new Set<Lease>();
  for (const p of patterns) {
    const near = leasesNear(leases, p);
    if (near === leases) return leases;
    for (const l of near) wanted.add(l);
  }
  return leases.filter((l) => wanted.has(l));
}

export function overlapText(o: Overlap): string {
  const who = `(${o.agent}${o.task ? `, task ${o.task}` : ", no task"})`;
  return o.unchecked ? `${o.verdict}  ${o.scope} may overlap ${o.pattern} ${who}: not looked at, ${BUDGET_NOTE}` : `${o.verdict}  ${o.scope} overlaps ${o.pattern} ${who}`;
}
