import { fail, HandoffError, type Refusal } from "../core/errors.ts";
import { newTaskId, validateTaskId } from "../core/ids.ts";
import { freshBytes } from "./entropy.ts";
import { refuse, type Outcome } from "../core/outcome.ts";
import { isFinal, Task } from "../core/task.ts";
import { createTask, isLive, settle, type NewTaskInput, type OpContext } from "../core/task-ops.ts";
import { LocalCandidates, noteLocalLoss, orderedCandidates, readyCandidates } from "./ready-index.ts";
import { CheckReads } from "./check-reads.ts";
import { ReadMoved } from "./rests-on.ts";
import { writeSteps } from "./codec.ts";
import { recordApproval } from "./approvals.ts";
import { TASKS_PREFIX, type CasOptions, type SharedDeadline, type Store } from "./store.ts";
import { listAgents } from "./agent-store.ts";
import { activeOthers, chooseCandidate, contendersAmong, MAX_POOL } from "../core/candidate-choice.ts";
import { noteRival, recentRivals } from "../core/rivals.ts";
import type { RefTip } from "../git/refs.ts";
import { movedSince } from "../git/ref-files.ts";
import { readSmallFile, writeSmallFile } from "./small-file.ts";
import { textOrder } from "../core/text-order.ts";
import { ListingSnapshot } from "./record-cache-listing.ts";
import { shownTask, type ShownTask } from "../core/task-view.ts";
import { viewContext } from "./check-context.ts";
import type { OrderedTasks } from "./task-order.ts";

export { TASKS_PREFIX };
export const TASK_FILE = "task.json";

export function taskRef(id: string): string {
  return TASKS_PREFIX + validateTaskId(id);
}

function ctxOf(store: Store, now: Date): OpContext {
  return { actor: store.actor, now, ...(store.takeoverGraceMs ? { takeoverGraceMs: store.takeoverGraceMs } : {}) };
}

/** The task record at commit `oid` of `ref`, refused as corrupt when it names another task. */
export async function readTaskAt(store: Store, ref: string, oid: string): Promise<Task> {
  return taskOfRef(ref, await store.record(ref, oid, TASK_FILE, Task));
}

/** `task`, read from `ref`: a ref copied or pointed at another task's commit would otherwise act on the wrong task's record. */
export function taskOfRef(ref: string, task: Task): Task {
  if (ref !== TASKS_PREFIX + task.id) fail("corrupt_state", `${ref} is corrupt: it holds task ${JSON.stringify(task.id)}`, { ref });
  return task;
}

/** The task as stored (not settled), with the commit it was read from. */
export async function loadTask(store: Store, id: string): Promise<{ task: Task; tip: string }> {
  const ref = taskRef(id);
  const tip = await store.readRef(ref);
  if (!tip) fail("not_found", `no task ${id}`, { task: id }, [{ action: "fix_input", detail: "list tasks: git handoff task list" }]);
  try {
    return { task: await readTaskAt(store, ref, tip), tip };
  } catch (e) {
    // No verb can act on a record it cannot read: say which one removes the ref.
    if (e instanceof HandoffError && e.code === "corrupt_state" && !e.refusal.suggestions?.length) {
      throw new HandoffError({ ...e.refusal, suggestions: [corruptTaskFix(id)] });
    }
    throw e;
  }
}

/** What removes a task ref no verb can read (logged, by compare-and-swap: remove-corrupt.ts). */
export function corruptTaskFix(id: string): { action: "fix_input"; detail: string } {
  return { action: "fix_input", detail: `remove it: git handoff cancel ${id} --force --reason TEXT (logged in refs/handoff-local/repair-log)` };
}

/**
 * The task as every reader should see it: an expired claim is shown as free (lazy expiry), but
 * another agent's stands for the takeover grace, with `grace_until` (viewContext), as a claim of it
 * is refused until then.
 */
export async function showTask(store: Store, id: string): Promise<ShownTask> {
  const { task } = await loadTask(store, id);
  return shownTask(task, await viewContext(store));
}

export interface TaskListing {
  tasks: Task[];
  /** Refs that could not be read; reported, never fatal for a listing. */
  problems: string[];
}

/**
 * Listings by the tips they were read from. A long-running store hands back the same tips array
 * while no task ref changed (RefFiles.listFollowed), so the records and their order are kept.
 */
const listed = new WeakMap<object, TaskListing>();

/**
 * Every task, settled as showTask settles one (another agent's claim inside the takeover grace
 * held, with `grace_until`), or as stored (`settled: false`).
 */
export async function listTasks(store: Store, opts: { settled?: boolean } = {}): Promise<TaskListing & { tasks: ShownTask[] }> {
  const stored = await storedListing(store);
  if (opts.settled === false) return { tasks: [...stored.tasks], problems: [...stored.problems] };
  const ctx = await viewContext(store);
  return { tasks: stored.tasks.map((t) => shownTask(t, ctx)), problems: [...stored.problems] };
}

/**
 * Every task as stored, oldest first: the shared listing itself (never change it), the same
 * object while no task ref moved, so what callers derive from it can be kept by it.
 */
export async function storedListing(store: Store): Promise<Readonly<TaskListing>> {
  return storedListingOf(store, await store.listRefs(TASKS_PREFIX));
}

/** storedListing of these tips, as the store lists them (a caller that keeps what decided them). */
export async function storedListingOf(store: Store, tips: RefTip[]): Promise<Readonly<TaskListing>> {
  let stored = listed.get(tips);
  if (!stored) {
    // One-shot views over many tasks read the whole listing from one file named by the tips. Only
    // the views write such files, and any write since moves the tips: another command (a claim's
    // capacity check) would hash every tip to look for a file that is nearly never there (7 ms at
    // 1,000 tasks in a cold process, where the hash loop is not yet compiled).
    const snapshot = store.warm || !store.keepsRecords ? null : ListingSnapshot.of<Task>(store.repo.commonDir, tips);
    const saved = snapshot?.read(tips.length);
    stored = saved ? { tasks: saved, problems: [] } : ((await reordered(store, tips)) ?? (await sortedListing(store, tips)));
    store.flushRecords();
    if (snapshot && !saved && store.keepsRecords && !stored.problems.length) snapshot.save(stored.tasks);
    listed.set(tips, stored);
  }
  return stored;
}

const READ_BATCH = 256;

/**
 * The last listing of each store, to derive the next one from when only records changed:
 * `records` in the tips' order, `pos` each one's place in the listing (by age), and the listing.
 */
const previous = new WeakMap<Store, { tips: RefTip[]; records: Task[]; pos: Int32Array; listing: TaskListing }>();

/** A listing derived from the one before: that one, and its records replaced (before, after). */
const replacedFrom = new WeakMap<TaskListing, { from: TaskListing; replaced: [Task, Task][] }>();

/**
 * For a listing derived from the one before in a long-running process: that listing and the
 * records it replaced, so what is kept per listing (the claimed tasks, task-listing.ts) is patched
 * rather than built again from 10,000 tasks. Undefined for a listing read afresh.
 */
export function listingStep(listing: TaskListing): { from: TaskListing; replaced: readonly [Task, Task][] } | undefined {
  return replacedFrom.get(listing);
}

async function sortedListing(store: Store, tips: RefTip[]): Promise<TaskListing> {
  const records: Task[] = [];
  const problems: string[] = [];
  store.expectTaskRecords(tips.length);
  // Read a batch at a time: objects neither loose nor in the repository's own packs (alternates)
  // then go to the long-lived `git cat-file --batch` many requests at once, not one round trip each.
  for (let i = 0; i < tips.length; i += READ_BATCH) {
    const batch = tips.slice(i, i + READ_BATCH).map(({ name, oid }) => readTaskAt(store, name, oid).then((task) => ({ task }), (error: unknown) => ({ error })));
    for (const r of await Promise.all(batch)) {
      if ("task" in r) records.push(r.task);
      else if (r.error instanceof HandoffError) problems.push(r.error.message);
      else throw r.error;
    }
  }
  const order = records.map((_, i) => i).sort((a, b) => byAge(records[a]!, records[b]!));
  const listing = { tasks: order.map((i) => records[i]!), problems };
  if (!problems.length) {
    const pos = new Int32Array(order.length);
    order.forEach((r, k) => (pos[r] = k));
    previous.set(store, { tips, records, pos, listing });
  }
  return listing;
}

/**
 * The same task refs as last time, some at new commits: their records change but never their
 * age or id, so the last order holds and 10,000 tasks are not sorted again for one claim.
 */
async function reordered(store: Store, tips: RefTip[]): Promise<TaskListing | null> {
  const last = previous.get(store);
  if (!last || last.tips.length !== tips.length) return null;
  // Patched by the ref watch from the very listing read last time (ref-files.ts): the same names,
  // and only the positions it names moved. Else every tip is compared.
  const step = movedSince(tips);
  const positions = step?.from === last.tips ? step.moved : null;
  if (!positions) for (let i = 0; i < tips.length; i++) if (tips[i]!.name !== last.tips[i]!.name) return null;
  const records = [...last.records];
  const at: number[] = [];
  for (const i of positions ?? tips.keys()) {
    if (tips[i]!.oid === last.tips[i]!.oid) continue;
    let task: Task;
    try {
      task = await readTaskAt(store, tips[i]!.name, tips[i]!.oid);
    } catch (e) {
      if (!(e instanceof HandoffError)) throw e;
      return null;
    }
    if (task.created_at !== records[i]!.created_at || task.id !== records[i]!.id) return null;
    at.push(i);
    records[i] = task;
  }
  // The listing in age order, patched where records changed (their age never does).
  const tasks = last.listing.tasks.slice();
  for (const i of at) tasks[last.pos[i]!] = records[i]!;
  const listing = { tasks, problems: [] };
  replacedFrom.delete(last.listing); // one step back only: no chain of old listings stays alive
  replacedFrom.set(listing, { from: last.listing, replaced: at.map((i): [Task, Task] => [last.records[i]!, records[i]!]) });
  previous.set(store, { tips, records, pos: last.pos, listing });
  return listing;
}

/** Oldest first, then by id as `localeCompare` orders them (textOrder: no collator for times). */
export function byAge(a: Pick<Task, "created_at" | "id">, b: Pick<Task, "created_at" | "id">): number {
  return a.created_at === b.created_at ? textOrder(a.id, b.id) : textOrder(a.created_at, b.created_at);
}

export async function addTask(store: Store, input: Omit<NewTaskInput, "id"> & { id?: string }): Promise<Task> {
  const explicit = input.id !== undefined;
  if (explicit) validateTaskId(input.id!);
  const created = await store.casLoop(async (now) => {
    const id = input.id ?? newTaskId(freshBytes(8));
    const out = createTask({ ...input, id }, ctxOf(store, now));
    if (!out.ok) throw new HandoffError(out.refusal);
    const ref = taskRef(id);
    if (explicit && (await store.readRef(ref))) {
      fail("exists", `task ${id} already exists`, { task: id }, [{ action: "fix_input", detail: "choose another --id, or leave it out for a generated one" }]);
    }
    const tip = writeSteps(store, null, TASK_FILE, out.steps);
    return { updates: [{ ref, new: tip, old: null }], result: out.record };
  });
  // Written here: the person (or agent) who wrote it in this clone consents to running it here.
  if (created.verify) await recordApproval(store, created.verify, "written", created.id);
  return created;
}

/** Applies a pure task operation under compare-and-swap, retrying on fresh state after a lost race. */
export async function mutateTask(
  store: Store,
  id: string,
  op: (task: Task, ctx: OpContext) => Outcome<Task>,
  opts: CasOptions = {},
): Promise<Task> {
  const ref = taskRef(id);
  const done = await store.casLoop<{ task: Task } | { refusal: Refusal }>(async (now) => {
    const { task, tip } = await loadTask(store, id);
    const ctx = await store.writeContext(now);
    const out = op(task, ctx);
    if (!out.ok) {
      // A lease that ran out for the last allowed time fails the task. Every later operation is
      // refused (the task is final), so unless this writer records the expiry and the failure,
      // the history would never say so: write them, then report the refusal.
      const settled = settle(task, ctx);
      if (settled.steps.length === 0 || !isFinal(settled.record.status)) throw new HandoffError(out.refusal);
      const failedTip = writeSteps(store, tip, TASK_FILE, settled.steps);
      return { updates: [{ ref, new: failedTip, old: tip }], result: { refusal: out.refusal } };
    }
    if (out.steps.length === 0) return { updates: [], result: { task: out.record } };
    const newTip = writeSteps(store, tip, TASK_FILE, out.steps);
    return { updates: [{ ref, new: newTip, old: tip }], result: { task: out.record } };
  }, opts);
  if ("refusal" in done) throw new HandoffError(done.refusal);
  return done.task;
}

/**
 * A readiness rule for `claimNext`, made from the listing: returns why a candidate may not be
 * taken (for example a dependency not done yet), or null. It filters the candidates and is checked
 * again inside the compare-and-swap, on the candidate as it then stands.
 */
export type ReadinessCheck = (byId: TaskLookup) => (candidate: Task) => Refusal | null;

/** Every task by id, as stored (a listing's, or the task order file's: each looked up on demand). */
export interface TaskLookup {
  get(id: string): Task | undefined;
}

/**
 * Takes a claimable task: with a sync remote, drawn at random among the best few
 * (candidate-choice.ts), so callers in several clones spread out instead of all racing for the
 * single best one; without one, the best. A candidate someone else just
 * took is skipped and the next one drawn from local state, which the lost race's own refresh has
 * brought up to date; no other refresh is made. The whole call shares one remote deadline, and a
 * retry after a race lost through the remote backs off with jitter.
 */
export async function claimNext(
  store: Store,
  op: (task: Task, ctx: OpContext) => Outcome<Task>,
  mutate: (store: Store, id: string, op: (task: Task, ctx: OpContext) => Outcome<Task>, opts: CasOptions) => Promise<Task> = mutateTask,
  opts: { ready?: ReadinessCheck; ordered?: () => Promise<OrderedTasks | null> } = {},
): Promise<Task> {
  const tried = new Set<string>();
  const deadline: SharedDeadline = {};
  // Racers in this clone lose a local compare-and-swap in a millisecond: a caller takes the queue
  // in order until it loses, then lists again and draws among the next few (ready-index.ts);
  // racers through a remote (a push each) are spread out among the best few (candidate-choice.ts).
  const spread = (await store.syncRemote()) !== null;
  let local: LocalCandidates | null = null;
  let check: ((candidate: Task) => Refusal | null) | undefined;
  // A contended caller here keeps its write turn from one candidate to the next: given back after
  // each candidate found taken, it queued again behind every rival (two turns a grant among eight
  // racers, most of each call spent waiting).
  let turn = spread ? null : await store.exclusiveTurn();
  // A one-shot claim in this clone takes its candidates from the task order file (task-order.ts):
  // the records it looks at, not 10,000 (undefined: not read yet; null: none, or a line damaged).
  let ordered: OrderedTasks | null | undefined = spread || store.warm || !opts.ordered ? null : undefined;
  // Through a sync remote the claim rests on the records its readiness check read (check-reads.ts).
  // Without one it need not: a dependency's `done` here is final, and only a refresh from a remote
  // puts another record in its place.
  const reads = new CheckReads();
  try {
    for (let lost = 0, moved = 0; ; ) {
      let next: Task | undefined;
      try {
        next = spread ? undefined : local?.next(store.now(), lost);
        if (!next) {
          if (ordered === undefined) ordered = await opts.ordered!();
          const now = store.now();
          // Settled as the claim will be (the write context, no network call): another agent's
          // claim inside the takeover grace is no candidate, where drawing it cost a refused
          // attempt through the remote, counted as a race lost to its holder.
          const ctx = await store.writeContext(now);
          const keep = (t: Task) => !tried.has(t.id) && !check?.(t);
          let candidates: Iterator<Task>;
          let tasks: readonly Task[] = [];
          if (ordered) {
            check = opts.ready?.(lookupIn(ordered));
            candidates = orderedCandidates(ordered, ctx, keep);
          } else {
            // The shared listing itself (read only): a copy of 10,000 tasks per call bought nothing.
            const tips = await store.listRefs(TASKS_PREFIX, { keep: false }); // a claim follows: no record written
            tasks = (await storedListingOf(store, tips)).tasks;
            let byId: Map<string, Task> | undefined;
            const lookup: TaskLookup = { get: (id) => (byId ??= new Map(tasks.map((t) => [t.id, t]))).get(id) };
            check = opts.ready?.(spread ? reads.watch(lookup, tips) : lookup);
            candidates = readyCandidates(tasks, ctx, keep);
          }
          if (spread) next = chooseCandidate(firstOf(candidates, MAX_POOL), { now, random: Math.random(), contenders: await racersSeen(store, tasks, now), lost });
          else next = (local = new LocalCandidates(candidates, store)).next(now, lost);
        }
      } catch (e) {
        if (!(e instanceof SyntaxError) || !ordered) throw e;
        // A damaged line of the order file: the candidates from every record instead.
        ordered.close?.();
        ordered = null;
        local = null;
        continue;
      }
      if (!next) {
        fail("no_task_ready", "no task is ready to claim", {}, [
          { action: "wait", detail: "wait for tasks to be added or released" },
          { action: "work_elsewhere", detail: "see what others hold: git handoff status" },
        ]);
      }
      tried.add(next.id);
      const ready = check;
      const chosen = next;
      const restsOn = spread && ready ? reads.of(() => ready(chosen)) : null;
      try {
        const guarded = (t: Task, ctx: OpContext): Outcome<Task> => {
          // Taken meanwhile by another call of this same agent (two sessions, parallel tool
          // calls): a claim of one's own task renews it, which would hand both calls one task.
          // Only a live claim: the agent's own expired one (a worker killed and started again
          // under its name) is the task back in the queue, for this agent too.
          if (t.claim && t.claim.agent === ctx.actor.agent && isLive(t, ctx.now)) {
            return refuse({ code: "held_by_other", message: `task ${t.id} was just claimed by another call of ${t.claim.agent}`, data: { task: t.id, holder: t.claim.agent } });
          }
          const why = restsOn ? reads.within(restsOn, () => ready?.(t)) : ready?.(t);
          return why ? refuse(why) : op(t, ctx);
        };
        return await mutate(store, next.id, guarded, { exclusive: true, deadline, ...(restsOn?.size ? { restsOn } : {}) });
      } catch (e) {
        // A record the decision read moved here meanwhile (a refresh put the remote's in place of a
        // `done` not pushed, say): decided again on a fresh listing, a few times, then the next one.
        if (e instanceof ReadMoved) {
          if (moved++ < MAX_MOVED) tried.delete(next.id);
          local = null;
          continue;
        }
        // Someone else got it first, it finished meanwhile, or it gained a blocker: try another one.
        if (e instanceof HandoffError && (e.code === "held_by_other" || e.code === "final_state" || e.code === "not_found" || e.code === "blocked" || e.code === "wrong_state" || e.code === "addressed_elsewhere")) {
          if (e.code === "held_by_other") {
            lost++;
            if (spread) noteLostRace(store, e.refusal.data?.holder);
            else if (store.warm) {
              noteLocalLoss(store);
              store.noteContended();
              turn ??= await store.exclusiveTurn();
              local = null;
            }
          }
          if (deadline.until !== undefined) await lostRacePause(deadline, lost);
          continue;
        }
        throw e;
      }
    }
  } finally {
    turn?.give();
    ordered?.close?.();
  }
}

/** How many times one `claimNext` decides again after a record its decision read moved. */
const MAX_MOVED = 5;

/**
 * Tasks by id from the ordered tasks (a binary search of the places by id each). A damaged line
 * (the file is then removed and written anew by the next listing) reads as no such task: the
 * check runs inside the compare-and-swap, where a refusal is the only safe answer.
 */
function lookupIn(o: OrderedTasks): TaskLookup {
  return {
    get: (id) => {
      try {
        const i = o.placeOf(id);
        return i === undefined ? undefined : o.record(i);
      } catch (e) {
        if (e instanceof SyntaxError) return undefined;
        throw e;
      }
    },
  };
}


const rivalsFile = (store: Store) => `${store.repo.commonDir}/handoff/rivals`;

/** Records who beat a caller of this clone to a task through the remote (rivals.ts). */
function noteLostRace(store: Store, holder: unknown): void {
  if (typeof holder !== "string") return;
  writeSmallFile(rivalsFile(store), noteRival(readSmallFile(rivalsFile(store)), holder, store.now().getTime()));
}

/**
 * How many other agents are likely claiming: live claims, active sessions on the roster, recent
 * rivals (candidate-choice.ts). Only read for claims through a remote, whose fetch and push
 * dwarf the roster's read.
 */
async function racersSeen(store: Store, tasks: readonly Task[], now: Date): Promise<number> {
  const { agents } = await listAgents(store);
  return Math.max(contendersAmong(tasks, store.actor.agent, now), activeOthers(agents.map((a) => a.record), store.actor.agent, now, store.config), rivalsOf(store, now));
}

/** How many agents beat this clone to a task lately: racers even when none holds a claim now. */
function rivalsOf(store: Store, now: Date): number {
  return recentRivals(readSmallFile(rivalsFile(store)), store.actor.agent, now.getTime());
}

/** The first `n` of a lazy sequence (the pool is never larger: only those are settled). */
function firstOf<T>(items: Iterator<T>, n: number): T[] {
  const out: T[] = [];
  while (out.length < n) {
    const r = items.next();
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}

/** After a race lost through the remote: a jittered pause, never past the call's deadline. */
async function lostRacePause(deadline: SharedDeadline, lost: number): Promise<void> {
  const left = (deadline.until ?? 0) - Date.now();
  if (left <= 0) {
    fail("lost_race", `other clones took every candidate tried (${lost} races lost) before this claim's deadline; try again`, { lost }, [
      { action: "retry", detail: "many agents are claiming at once; run the command again" },
    ]);
  }
  const cap = Math.min(500, 25 * 2 ** Math.min(lost, 5));
  await new Promise((r) => setTimeout(r, Math.min(left, cap / 2 + Math.random() * (cap / 2))));
}
