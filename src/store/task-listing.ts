// Listings bounded by what they return: `list_tasks` / `task list --limit N` settle and return N
// tasks, not every task. The orders are kept by listing (a long-running store keeps its listing
// while no task ref moved), so a call costs the N it returns plus the refs that changed.
//   ready work (todo): best first, the order claim --next takes them in;
//   history (done, failed, cancelled): newest first (most recently changed);
//   everything else, and no status: oldest first, as the unbounded listing.
import { isFinal, type Task, type TaskStatus } from "../core/task.ts";
import { settle, type OpContext } from "../core/task-ops.ts";
import { shownTask, type ShownTask } from "../core/task-view.ts";
import { viewContext } from "./check-context.ts";
import { upperBound } from "../core/upper-bound.ts";
import { orderedCandidates, readyCandidates } from "./ready-index.ts";
import type { Store } from "./store.ts";
import { byAge, listingStep, storedListing, storedListingOf, TASKS_PREFIX, type TaskListing } from "./task-store.ts";
import { claimedTasks } from "./claimed-index.ts";
import type { ClaimedTask } from "../core/capacity.ts";
import { LISTING_AT, readViewPart, saveViewPart, viewKey, viewPart, type ViewPart } from "./record-cache-listing.ts";
import { mergeSorted } from "../git/ref-files.ts";
import { viewTasksOf } from "../core/view-tasks.ts";
import { fromOrderFile, type OrderedTasks } from "./task-order.ts";
import { liveClaimAt, storedStatusAt } from "./task-order-status.ts";
import { readyRecord } from "../core/dependency-graph.ts";
import { addressRefusal, type Taker } from "../core/address.ts";

export type ListingOrder = "best first" | "newest first" | "oldest first";

export function listingOrder(status: TaskStatus | undefined): ListingOrder {
  if (status === "todo") return "best first";
  if (status && isFinal(status)) return "newest first";
  return "oldest first";
}

const newestOf = new WeakMap<object, Task[]>();

/** A task's status as readers see it (lazy expiry, the takeover grace: viewContext), without building its settled record. */
function statusAt(t: Task, ctx: OpContext): TaskStatus {
  if (t.status !== "claimed" || !t.claim || Date.parse(t.claim.expires_at) > ctx.now.getTime()) return t.status;
  return settle(t, ctx).record.status;
}

export interface BoundedListing {
  tasks: ShownTask[];
  total: number;
  /** The status of every task that matches, oldest first (for counts). */
  statuses: TaskStatus[];
  problems: string[];
  order: ListingOrder;
}

export async function listTasksBounded(
  store: Store,
  opts: { status?: TaskStatus; limit: number },
): Promise<BoundedListing> {
  // A one-shot command reads the task order file: the records it returns, not every one.
  const ctx = await viewContext(store);
  const fromFile = await fromOrderFile(store, (o) => boundedFrom(o, ctx, opts));
  if (fromFile) return fromFile;
  const listing: Readonly<TaskListing> = await storedListing(store);
  const order = listingOrder(opts.status);
  // The status of every match, oldest first (for counts): a field read per task, no record built.
  const statuses: TaskStatus[] = [];
  for (const t of listing.tasks) {
    const st = statusAt(t, ctx);
    if (!opts.status || st === opts.status) statuses.push(st);
  }
  const tasks: ShownTask[] = [];
  if (order === "best first") {
    for (const t of readyCandidates(listing.tasks, ctx, () => true)) {
      if (tasks.length >= opts.limit) break;
      tasks.push(t);
    }
  } else {
    let source = listing.tasks;
    if (order === "newest first") {
      let newest = newestOf.get(listing);
      if (!newest) newestOf.set(listing, (newest = [...listing.tasks].sort((a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0))));
      source = newest;
    }
    for (const t of source) {
      if (tasks.length >= opts.limit) break;
      if (!opts.status || statusAt(t, ctx) === opts.status) tasks.push(shownTask(t, ctx));
    }
  }
  return { tasks, total: statuses.length, statuses, problems: [...listing.problems], order };
}

/**
 * listTasksBounded over the ordered tasks of the task order file: the same walk (the statuses of
 * all from the header, a record parsed and settled only where a claim may have run out), then the
 * first `limit` of the order, each record parsed as it is taken.
 */
function boundedFrom(o: OrderedTasks, ctx: OpContext, opts: { status?: TaskStatus; limit: number }): BoundedListing {
  const ms = ctx.now.getTime();
  const order = listingOrder(opts.status);
  const settled = new Map<number, ShownTask>();
  const settledAt = (i: number) => settled.get(i) ?? settled.set(i, shownTask(o.record(i), ctx)).get(i)!;
  // As statusAt: a live claim stays claimed whoever asks; one that ran out is settled (by the
  // grace too: the file holds each claim's expiry as stored, never a status settled by a clock).
  const statusOf = (i: number) => {
    const st = storedStatusAt(o.head, i)!;
    return st === "claimed" && !liveClaimAt(o.head, i, ms) ? settledAt(i).status : st;
  };
  const statuses: TaskStatus[] = [];
  for (let i = 0; i < o.count; i++) {
    const st = statusOf(i);
    if (!opts.status || st === opts.status) statuses.push(st);
  }
  const tasks: ShownTask[] = [];
  if (order === "best first") {
    for (const t of orderedCandidates(o, ctx, () => true)) {
      if (tasks.length >= opts.limit) break;
      tasks.push(t);
    }
  } else {
    const places = order === "newest first" ? o.head.newest : null;
    for (let k = 0; k < o.count; k++) {
      if (tasks.length >= opts.limit) break;
      const i = places ? places[k]! : k;
      if (!opts.status || statusOf(i) === opts.status) tasks.push(settledAt(i));
    }
  }
  return { tasks, total: statuses.length, statuses, problems: [], order };
}

/**
 * The ready tasks of the ordered tasks (readyTasks, core/dependency-graph.ts, and not addressed
 * elsewhere), best first: the first `limit` of them, and how many there are. A todo task that
 * waits on nobody and is addressed to anyone (its flags) is ready for sure: past the limit it is
 * counted without its record.
 */
export function readyFrom(o: OrderedTasks, who: Taker, ctx: OpContext, limit: number): { ready: Task[]; total: number } {
  const ms = ctx.now.getTime();
  const { best, flags } = o.head;
  const statusOf = (id: string) => {
    const i = o.placeOf(id);
    return i === undefined ? undefined : storedStatusAt(o.head, i);
  };
  const ready: Task[] = [];
  let total = 0;
  for (let k = 0; k < o.count; k++) {
    const i = best[k]!;
    const code = storedStatusAt(o.head, i);
    const ranOut = code === "claimed" && !liveClaimAt(o.head, i, ms);
    if (code !== "todo" && !ranOut) continue;
    if (!ranOut && !flags[i] && ready.length >= limit) {
      total++;
      continue;
    }
    // A claim that ran out here is settled by the caller's context: inside the takeover grace it stands.
    const t = readyRecord(o.record(i), statusOf, ctx);
    if (!t || addressRefusal(t, who)) continue;
    total++;
    if (ready.length < limit) ready.push(t);
  }
  return { ready, total };
}

const claimedOf = new WeakMap<object, Task[]>();

/**
 * The claimed tasks of a listing derived from the last one (listingStep): the last one's, with the
 * replaced records swapped, in the listing's order (by age), without a walk of every task.
 */
function patchedClaimed(listing: TaskListing): Task[] | null {
  const step = listingStep(listing);
  const before = step && claimedOf.get(step.from);
  if (!before) return null;
  if (!step.replaced.length) return before;
  const gone = new Set(step.replaced.map(([old]) => old));
  const claimed = before.filter((t) => !gone.has(t));
  // Each new claim put in place by a binary search (by age): with a thousand claims live, sorting
  // the whole list again at every claim was most of this.
  for (const [, now] of step.replaced) if (now.status === "claimed") claimed.splice(upperBound(claimed, now, byAge), 0, now);
  return claimed;
}

/**
 * The tasks stored as claimed, settled (an expired claim shows as such): all that a capacity
 * check looks at, without settling every task of the listing.
 */
export async function listClaimedTasks(store: Store): Promise<Task[]> {
  const ctx = { actor: store.actor, now: store.now() };
  // One-shot: whole records (the claimed summary keeps only what a capacity check reads).
  const stored = store.warm ? await storedListedClaimed(store) : (await claimedTasks(store, { whole: true })).sort(byAge);
  return stored.map((t) => settle(t, ctx).record);
}

/**
 * The tasks stored as claimed, by age, as stored: an expired claim still shows as claimed (a
 * caller that looks at claims' expiry itself, as a claim's overlap advisory does, need not
 * settle a thousand of them to find the few near its scope). Shared: never mutate it.
 */
export async function storedClaimedTasks(store: Store): Promise<readonly ClaimedTask[]> {
  if (!store.warm) {
    // A one-shot command reads what a capacity check needs of the claimed tasks only (claimed-index.ts).
    return (await claimedTasks(store)).sort(byAge);
  }
  return storedListedClaimed(store);
}

/** A warm store's claimed tasks, from its listing. */
async function storedListedClaimed(store: Store): Promise<readonly Task[]> {
  const listing = await storedListing(store);
  let claimed = claimedOf.get(listing);
  if (!claimed) claimedOf.set(listing, (claimed = patchedClaimed(listing) ?? listing.tasks.filter((t) => t.status === "claimed")));
  return claimed;
}

/**
 * What a text view over all tasks reads (viewPart): the tasks it can show, stored (not settled),
 * and the count of the final ones left out. A one-shot view reads it from the view file of the
 * current task refs when there is one (viewKey), so its cost follows the open work, not the
 * history, and no task ref is decoded: by its columns and the records asked for, or with `whole`
 * every record (status --all). A part read from the file is to be closed (ViewPart.close).
 */
export async function viewListing(store: Store, opts: { whole?: boolean } = {}): Promise<ViewPart & { problems: string[] }> {
  // The loose task refs from the record of their folders while it stands (task-ref-record.ts).
  const parts = store.warm ? null : store.listRefParts(TASKS_PREFIX);
  const key = parts ? viewKey(parts) : null;
  const saved = key ? readViewPart(store.repo.commonDir, key, opts) : null;
  if (saved) return { ...saved, problems: [] };
  // A large listing reads the very refs the key names, so the view saved under the key is theirs;
  // a small one (no view file) is listed as any listing is, with its checks.
  const tips = parts ? mergeSorted(parts.packed(), parts.loose) : null;
  const full = tips && tips.length >= LISTING_AT ? await storedListingOf(store, tips) : await storedListing(store);
  const part = viewPart(full.tasks);
  if (key && store.keepsRecords && !full.problems.length && full.tasks.length === tips!.length && tips!.length >= LISTING_AT) saveViewPart(store.repo.commonDir, key, part);
  return { tasks: viewTasksOf(part.tasks), counted: part.counted, problems: [...full.problems] };
}

