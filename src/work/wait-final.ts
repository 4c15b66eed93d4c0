// Blocking until a task is final, following the sync remote cheaply: one fetch of exactly the
// task's refs per poll (250 ms growing to 2 s while nothing changes; objects come only when one
// moved), and that poll shared with every other waiter and worker of this clone (shared-poll.ts).
import { HandoffError } from "../core/errors.ts";
import { isFinal, type Task } from "../core/task.ts";
import { settle } from "../core/task-ops.ts";
import { viewContext } from "../store/check-context.ts";
import type { Store } from "../store/store.ts";
import { loadTask, taskRef } from "../store/task-store.ts";
import { Backoff, pause, readyToReceive } from "../sync/follow-ref.ts";
import { openFollower, type Follower } from "../sync/shared-poll.ts";
import { trace } from "../sync/trace.ts";
import { resultsRef } from "./bundle.ts";
import { refuseSelfDelegation } from "./self-delegation.ts";

/** How long polling stays at its quickest after the task was pushed or changed. */
const STEADY_MS = 2000;

/** `review`: the task went to review and the caller asked to stop there (`until: "review"`). */
export type WaitEnd = { kind: "final" | "review" | "timeout" | "interrupted"; task: Task };

export interface WaitOptions {
  /** Date.now() after which waiting stops (null: no bound but the task's own end). */
  deadline: number | null;
  signal: AbortSignal;
  progress: (prev: Task | null, next: Task) => void;
  /** A remote that cannot be read is reported once per outage, and waiting goes on. */
  warn: (message: string) => void;
  /** The caller just pushed the task: the first look can be local, the first ask of the remote waits a poll. */
  justPushed?: boolean;
  /**
   * `review`: end when the task is submitted for review too (its work done and verified, a
   * reviewer to decide), not only when it is final. Default: final (done, failed, cancelled); a
   * task in review is then waited on through the review, and a rejection, to its end.
   */
  until?: "final" | "review";
}

export async function waitForFinal(store: Store, id: string, opts: WaitOptions): Promise<WaitEnd> {
  trace(`wait: following ${id} (process up ${Math.round(process.uptime() * 1000)} ms)`);
  const remote = await store.syncRemote();
  const follower = remote ? openFollower(store, remote) : null;
  try {
    return await follow(store, id, opts, remote, follower);
  } finally {
    follower?.close();
  }
}

async function follow(store: Store, id: string, opts: WaitOptions, remote: string | null, follower: Follower | null): Promise<WaitEnd> {
  const ref = taskRef(id);
  // Steady polling for a while after the task was pushed and after each change: a running
  // worker claims within a poll or two, and a quick command's result follows the claim closely.
  const backoff = new Backoff(250, 2000, STEADY_MS, !!opts.justPushed);
  let prev: Task | null = null;
  let outage = false;
  for (let round = 0; ; round++) {
    // Intervals run from the start of one look to the start of the next: a look that fetched
    // (hundreds of ms over a slow link) does not push the next one back by its own length.
    const lookStarted = Date.now();
    if (follower && !(round === 0 && opts.justPushed)) {
      // The results travel in the same push as the completion: follow both, fetch both at once.
      // The deadline and the signal end a look in flight: a remote that stops answering would
      // otherwise hold the waiter for its own per-call deadline past either.
      const p = await bounded(opts, (signal) => follower.look([ref, resultsRef(id)], signal));
      if (!p.ok && stopped(opts)) return end(store, id, opts, prev);
      if (!p.ok && !outage) opts.warn(`cannot read ${ref} on ${remote} (${p.message}); still waiting`);
      outage = !p.ok;
      if (p.ok && p.changed) backoff.reset();
      // A result that fails validation on receive never arrives here: say so instead of waiting on.
      const bad = p.ok ? p.refused?.find((q) => q.ref === resultsRef(id) || q.ref === ref) : undefined;
      if (bad) throw new HandoffError({ code: "corrupt_state", message: `${bad.ref} ${bad.reason} (refused on receive; nothing was saved)`, data: { ref: bad.ref } });
    }
    const found = await loadTask(store, id).catch((e) => {
      // Not here and the remote could not be asked: ask again (once it answers, missing is missing).
      if (outage && e instanceof HandoffError && e.code === "not_found" && prev === null) return null;
      throw e;
    });
    if (found) {
      // An expired lease shows as free, and after the last allowed attempt as failed; through a
      // sync remote, the worker's only after the takeover grace (clock skew): inside it the worker
      // may still finish, and a claim of the task would be refused (store/check-context.ts).
      const task = settle(found.task, await viewContext(store)).record;
      // Waiting from inside a worker's task for a task only that busy worker may take: never ends.
      if (prev === null && task.status === "todo") refuseSelfDelegation(task.to ?? null);
      opts.progress(prev, task);
      prev = task;
      if (isFinal(task.status)) {
        trace(`wait: saw ${id} ${task.status}`);
        return { kind: "final", task };
      }
      if (task.status === "review" && opts.until === "review") return { kind: "review", task };
    }
    if (stopped(opts)) return end(store, id, opts, prev);
    // The first pause after the push is idle time: spend a little of it getting ready to receive.
    if (round === 0 && follower) await readyToReceive(store, [ref, resultsRef(id)]);
    const left = opts.deadline === null ? Infinity : opts.deadline - Date.now();
    await pause(Math.max(0, Math.min(backoff.take() - (Date.now() - lookStarted), left)), opts.signal);
  }
}

/** The caller's signal fired or its deadline passed. */
function stopped(opts: WaitOptions): boolean {
  return opts.signal.aborted || (opts.deadline !== null && Date.now() >= opts.deadline);
}

/** How waiting ended short of a final state: interrupted, else timed out; the task as last seen. */
async function end(store: Store, id: string, opts: WaitOptions, prev: Task | null): Promise<WaitEnd> {
  return { kind: opts.signal.aborted ? "interrupted" : "timeout", task: prev ?? (await loadTask(store, id)).task };
}

/** Runs `fn` with a signal that fires with the caller's or at its deadline, whichever comes first. */
async function bounded<T>(opts: WaitOptions, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  if (opts.deadline === null) return fn(opts.signal);
  const stop = new AbortController();
  const abort = () => stop.abort();
  const timer = setTimeout(abort, Math.max(0, opts.deadline - Date.now()));
  if (opts.signal.aborted) abort();
  else opts.signal.addEventListener("abort", abort, { once: true });
  try {
    return await fn(stop.signal);
  } finally {
    clearTimeout(timer);
    opts.signal.removeEventListener("abort", abort);
  }
}
