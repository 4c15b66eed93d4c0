// The order `claim --next` tries tasks in, kept between calls: sorting 10,000 tasks by priority,
// age and id on every claim cost more than the claim. The order is that of claimCandidates
// (core/task-ops.ts) and is kept while the listing holds the same tasks at the same places with
// the same priorities (a long-running store keeps the listing's order while no task ref came or
// went: task-store.ts), whatever else changed; finished tasks are skipped and settling, which
// depends on the time, is done lazily on the candidates actually looked at.
import { isFinal, type Task } from "../core/task.ts";
import { settle, type OpContext } from "../core/task-ops.ts";
import { chooseCandidate, poolSize } from "../core/candidate-choice.ts";
import type { OrderedTasks } from "./task-order.ts";
import { liveClaimAt, storedStatusAt } from "./task-order-status.ts";
import { textOrder } from "../core/text-order.ts";

let last: { input: readonly Task[]; order: number[] } | null = null;

/**
 * The head of the order known to hold no candidate, so that a call does not settle again the
 * thousands of claimed tasks ahead of the first ready one (claimed tasks come first: they are the
 * oldest): positions [0, upTo) of `last.order` held, in the records of the last listing, only
 * final tasks, live claims and tasks in review. It holds while those records stay (a record
 * replaced there cuts it back to that place) and until the earliest of those claims expires
 * (`until`, ms; without a takeover's grace, so never later than settling would say).
 */
let head = { upTo: 0, until: Infinity };
/** Each task's place in `last.order` (made when a head is first cut back). */
let rankOf: Int32Array | null = null;

/**
 * The same tasks at the same places with the same priorities (records may differ: a claim, a
 * release): the order by priority, age and id still holds, as age and id never change.
 */
function sameOrder(a: readonly Task[], b: readonly Task[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && (a[i]!.id !== b[i]!.id || a[i]!.priority !== b[i]!.priority)) return false;
  return true;
}

/** Where each task stands, best first (highest priority, then oldest, then id). */
function orderOf(tasks: readonly Task[]): number[] {
  if (last && sameOrder(last.input, tasks)) {
    if (head.upTo > 0 && last.input !== tasks) cutHead(last.input, tasks, last.order);
    last = { input: tasks, order: last.order };
    return last.order;
  }
  head = { upTo: 0, until: Infinity };
  rankOf = null;
  const order = tasks
    .map((_, i) => i)
    .sort((i, j) => {
      const a = tasks[i]!;
      const b = tasks[j]!;
      // textOrder, as claimCandidates: a collator made here loaded ICU's collation data in every
      // long-running server at its first claim (most of this sort's time), for times and ids that
      // textOrder orders as the collator does without one.
      return b.priority - a.priority || (a.created_at === b.created_at ? textOrder(a.id, b.id) : textOrder(a.created_at, b.created_at));
    });
  last = { input: tasks, order };
  return order;
}

/**
 * The claimable tasks (settled at `ctx.now`) that `keep` accepts, best first, as a lazy sequence:
 * a caller that takes the first and, after a lost race, the next, settles only those.
 */
export function* readyCandidates(tasks: readonly Task[], ctx: OpContext, keep: (t: Task) => boolean): Generator<Task> {
  const order = orderOf(tasks);
  const now = ctx.now.getTime();
  if (now >= head.until) head = { upTo: 0, until: Infinity };
  // The head grows while every task met is no candidate for anyone; the first that may be one (a
  // todo task, whatever `keep` says of it) ends it.
  let growing = true;
  for (let k = head.upTo; k < order.length; k++) {
    const t = tasks[order[k]!]!;
    if (isFinal(t.status)) {
      if (growing) head.upTo = k + 1;
      continue;
    }
    const settled = settle(t, ctx).record;
    if (growing) {
      const expiry = settled.status === "claimed" && settled.claim ? Date.parse(settled.claim.expires_at) : settled.status === "review" ? Infinity : NaN;
      if (expiry > now) {
        head = { upTo: k + 1, until: Math.min(head.until, expiry) };
        continue;
      }
      growing = false;
    }
    if (settled.status === "todo" && keep(settled)) yield settled;
  }
}

/**
 * readyCandidates over the ordered tasks: best first, past final tasks and live claims (no record
 * read), each other one settled; a todo one that `keep` accepts is a candidate.
 */
export function* orderedCandidates(o: OrderedTasks, ctx: OpContext, keep: (t: Task) => boolean): Generator<Task> {
  const ms = ctx.now.getTime();
  const { best } = o.head;
  for (let k = 0; k < o.count; k++) {
    const i = best[k]!;
    if (isFinal(storedStatusAt(o.head, i)!) || liveClaimAt(o.head, i, ms)) continue;
    const t = settle(o.record(i), ctx).record;
    if (t.status === "todo" && keep(t)) yield t;
  }
}

/**
 * The same order over new records: the head ends where the first record replaced within it stands
 * (a claim released there makes a candidate again).
 */
function cutHead(before: readonly Task[], now: readonly Task[], order: number[]): void {
  if (!rankOf) {
    rankOf = new Int32Array(order.length);
    order.forEach((i, k) => (rankOf![i] = k));
  }
  for (let i = 0; i < now.length; i++) if (now[i] !== before[i] && rankOf[i]! < head.upTo) head.upTo = rankOf[i]!;
}

/**
 * How a caller in this clone goes through the candidates. One that has not lost a race lately
 * takes them in order (a lone worker takes the queue as promised). After a lost race every loser
 * would move on to the very same next one and all but one lose again; instead each draws among
 * the next few of the same priority (candidate-choice.ts), a pool that doubles with every race
 * this call lost. A
 * process that lost a race in the last few seconds draws from the first pick on: its rivals are
 * likely still there.
 */
export class LocalCandidates {
  private pool: Task[] = [];
  /** The first candidate of a lower priority than the pool's, read ahead and kept for later. */
  private held: Task | undefined;

  constructor(
    private readonly items: Iterator<Task>,
    private readonly store: object,
  ) {}

  private take(): Task | undefined {
    const t = this.held;
    this.held = undefined;
    return t ?? (this.items.next().value as Task | undefined);
  }

  next(now: Date, lost: number, random = Math.random()): Task | undefined {
    const spread = Math.max(lost, recentlyLost(this.store) ? 1 : 0);
    if (spread === 0 && this.pool.length === 0) return this.take();
    const size = poolSize(Number.MAX_SAFE_INTEGER, 1, spread);
    // The pool holds one priority only: spreading never takes a lower priority while a higher one
    // is left (candidates come best first, so a priority's tasks are next to each other).
    while (this.pool.length < size) {
      const t = this.take();
      if (!t) break;
      if (this.pool.length && t.priority !== this.pool[0]!.priority) {
        this.held = t;
        break;
      }
      this.pool.push(t);
    }
    const pick = chooseCandidate(this.pool, { now, random, contenders: 1, lost: spread });
    if (pick) this.pool.splice(this.pool.indexOf(pick), 1);
    return pick;
  }
}

/** When each long-running store last lost a local race (wall clock: a pacing hint, not state). */
const lastLoss = new WeakMap<object, number>();
const RECENT_LOSS_MS = 5000;

export function noteLocalLoss(store: object): void {
  lastLoss.set(store, Date.now());
}

function recentlyLost(store: object): boolean {
  const at = lastLoss.get(store);
  return at !== undefined && Date.now() - at < RECENT_LOSS_MS;
}
