// The open tasks a view walks, by place: what the walks over every task read (status, the claim's
// holder, expiry, claim time, ttl and branch, whether a scope, dependencies or handoffs are there),
// and each whole view record by place for the few lines that show one. A one-shot text view at
// 10,000 tasks reads these from the view file's columns (store/record-cache-listing.ts) and parses
// only the records it shows; every other view has them from its records (viewTasksOf).
import type { TaskStatus } from "./task.ts";
import { textOrder } from "./text-order.ts";
import type { ViewTask } from "./view-task.ts";

export interface ViewTasks {
  readonly length: number;
  readonly ids: readonly string[];
  /** The status as stored (not settled). */
  readonly status: readonly TaskStatus[];
  /** The agent of the claim the record holds (whatever its status), else undefined. */
  readonly holder: readonly (string | undefined)[];
  /** Each claim's expiry (ms) where stored as claimed with a claim, else NaN (never live: NaN compares false). A view asked each expiry several times (settling, the held and expiring lists, the roster, stuck claims): parsed once. */
  readonly expires: Float64Array;
  /** The claim's time and ttl (ms), where there is a claim (else NaN). */
  readonly claimedAt: Float64Array;
  readonly ttl: Float64Array;
  /** The claim's branch, where there is a claim (else null). */
  readonly branch: readonly (string | null)[];
  /** flagsOf each task: whether it waits on others (WAITS), it carries handoffs (HANDS). */
  readonly flags: Uint8Array;
  /** The base of `agent`'s earliest claim (by claim time, the first of equals) among the tasks stored as claimed that have one. */
  firstBase(agent: string): string | null;
  /** The scopes of the tasks `agent` holds (stored as claimed), in the tasks' order, each glob once: what its declaration holds of them (declaration.ts declaredGlobs). */
  heldScopes(agent: string): readonly string[];
  /** The whole view record at `i`. */
  record(i: number): ViewTask;
}

/** Flags of a task, as the view file stores them. */
export const WAITS = 1;
export const HANDS = 2;

export function flagsOf(t: ViewTask): number {
  return (t.after?.length ? WAITS : 0) | (t.handoffs?.length ? HANDS : 0);
}

/** heldScopes of every agent that holds a task (stored as claimed) with a scope. */
export function heldScopesOf(tasks: readonly ViewTask[]): Map<string, string[]> {
  const sets = new Map<string, Set<string>>();
  for (const t of tasks) {
    if (t.status !== "claimed" || !t.claim || !t.scope.length) continue;
    let set = sets.get(t.claim.agent);
    if (!set) sets.set(t.claim.agent, (set = new Set()));
    for (const g of t.scope) set.add(g);
  }
  return new Map([...sets].map(([agent, set]) => [agent, [...set]]));
}

/** Each agent's earliest claim's base (drift measures committed work from it), over tasks stored as claimed. */
export function firstBases(tasks: readonly ViewTask[]): Map<string, string> {
  const first = new Map<string, ViewTask>();
  for (const t of tasks) {
    if (t.status !== "claimed" || !t.claim || !t.base) continue;
    const was = first.get(t.claim.agent);
    if (!was || textOrder(t.claim.claimed_at, was.claim!.claimed_at) < 0) first.set(t.claim.agent, t);
  }
  return new Map([...first].map(([agent, t]) => [agent, t.base!]));
}

/** The view of records in hand (whole or narrowed): each column read off its record. */
export function viewTasksOf(tasks: readonly ViewTask[]): ViewTasks {
  const n = tasks.length;
  const [expires, claimedAt, ttl] = [0, 1, 2].map(() => new Float64Array(n).fill(NaN)) as [Float64Array, Float64Array, Float64Array];
  const flags = new Uint8Array(n);
  const [ids, status, holder, branch] = [new Array<string>(n), new Array<TaskStatus>(n), new Array<string | undefined>(n), new Array<string | null>(n)];
  for (let i = 0; i < n; i++) {
    const t = tasks[i]!;
    const c = t.claim;
    ids[i] = t.id;
    status[i] = t.status;
    holder[i] = c?.agent;
    branch[i] = c?.branch ?? null;
    flags[i] = flagsOf(t);
    if (!c) continue;
    if (t.status === "claimed") expires[i] = Date.parse(c.expires_at);
    claimedAt[i] = Date.parse(c.claimed_at);
    ttl[i] = c.ttl_ms;
  }
  let bases: Map<string, string> | null = null;
  let scopes: Map<string, string[]> | null = null;
  return {
    length: n,
    ids,
    status,
    holder,
    expires,
    claimedAt,
    ttl,
    branch,
    flags,
    firstBase: (agent) => (bases ??= firstBases(tasks)).get(agent) ?? null,
    heldScopes: (agent) => (scopes ??= heldScopesOf(tasks)).get(agent) ?? [],
    record: (i) => tasks[i]!,
  };
}

/** `tasks` as a ViewTasks (records in hand are read through viewTasksOf). */
export function asViewTasks(tasks: readonly ViewTask[] | ViewTasks): ViewTasks {
  return Array.isArray(tasks) ? viewTasksOf(tasks) : (tasks as ViewTasks);
}
