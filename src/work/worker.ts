// The worker: takes ready tasks addressed to it or to anyone through the sync remote (exclusive
// claims), runs the local user's command for each, renews each claim at a third of its TTL while
// it works, and sends back the output and result files. A task with a verify command is finished
// as `done` finishes it: the command runs (only if written or approved in this clone) and the task
// goes to review, or fails when it does not pass; one whose command is not approved here is left
// in the queue (worker-choice.ts). It lives below the front ends so other loops (an agent
// CLI driver, an MCP tool) can share it. A worker runs for hours: it takes its Store from a
// FreshStore at every step, so a policy merged on the integration branch (or a changed git config)
// applies to its next claim, renewal and completion, never only after a restart.
// Here: the loop (poll, claim, follow cancels, stop). Its claims are worker-claims.ts, each task's
// run worker-task.ts, the sending of its result result-delivery.ts.
import { beat } from "../core/agent.ts";
import { parseDuration } from "../core/duration.ts";
import { HandoffError } from "../core/errors.ts";
import { rejectionToRework } from "../core/review.ts";
import { isFinal } from "../core/task.ts";
import { settle } from "../core/task-ops.ts";
import { endSessionFor, mutateOwnAgent, refreshHeartbeat } from "../store/agent-store.ts";
import { localMachine } from "../store/machine.ts";
import type { FreshStore } from "../store/fresh-store.ts";
import type { Store } from "../store/store.ts";
import { release } from "../store/task-actions.ts";
import { loadTask, taskRef } from "../store/task-store.ts";
import { pause } from "../sync/follow-ref.ts";
import { followQueue } from "../sync/follow-queue.ts";
import { openFollower } from "../sync/shared-poll.ts";
import { defaultBase } from "./run-task.ts";
import { spareWorktrees } from "./spare-worktree.ts";
import { sweepLeftovers } from "./leftovers.ts";
import { taskClaimer } from "./worker-claims.ts";
import type { WorkerOptions, WorkerSummary } from "./worker-options.ts";
import { workOn, type Running, type WorkerRun } from "./worker-task.ts";
import { WorkerSkips } from "./worker-skips.ts";

export type { WorkerOptions, WorkerSummary } from "./worker-options.ts";

/** The worker's declaration: its machine (stamped by the agent store) and how many tasks it takes. */
function declare(store: Store, capacity: number) {
  return mutateOwnAgent(store, (prev, ctx) => {
    const out = beat(prev, ctx);
    if (!out.ok) return out;
    const record = { ...out.record, capacity };
    return { ok: true, record, steps: out.steps.map((s) => ({ ...s, record })) };
  });
}

/**
 * `fresh` gives the Store of each step (fresh-store.ts): one step never holds a Store across a
 * wait, so a Store replaced after a policy change is used for at most one step more.
 */
export async function runWorker(fresh: FreshStore, opts: WorkerOptions): Promise<WorkerSummary> {
  const summary: WorkerSummary = { done: 0, review: 0, failed: 0, cancelled: 0, released: 0 };
  let store = await fresh.get();
  let remote = await store.syncRemote();
  const machine = await localMachine(store);
  const cwd = store.cwd;
  const ttlGiven = opts.ttl !== undefined ? parseDuration(opts.ttl, "--ttl") : null;
  await declare(store, opts.concurrency);
  opts.log(`worker ${store.actor.agent} on ${machine}: taking tasks addressed to it${opts.addressedOnly ? " (not those addressed to anyone)" : " or to anyone"}${remote ? ` from ${remote}` : ""}, up to ${opts.concurrency} at once`);
  for (const line of await sweepLeftovers(cwd, store.repo.commonDir)) opts.log(line);
  const running = new Map<string, Running>();
  let started = 0;
  let tick = new AbortController();
  let lastOpenProblem = "";

  // Idle workers, waiters and MCP watchers of this clone share their looks at the remote's queue:
  // one look per poll interval for all of them, however many there are.
  const current = () => fresh.getOrCurrent();
  let queue = remote ? followQueue(store, remote, current) : null;
  // Tasks this worker gave back for others: never taken again here, or for a while after a
  // failure that may pass (worker-skips.ts).
  const unworkable = new WorkerSkips();
  // The next task's worktree is made while the worker idles, not after its claim.
  const spare = spareWorktrees(cwd, store.repo.commonDir);
  const prepareSpare = () => spare.prepare(async () => defaultBase(await fresh.get()));
  prepareSpare();
  const claimer = taskClaimer({ opts, store: () => store, queue: () => queue, ttlGiven, unworkable });
  const run: WorkerRun = { fresh, opts, summary, store: () => store, remote: () => remote, machine, cwd, ttlGiven, unworkable, spare, prepareSpare };

  // Shared with the clone's waiters and other workers: one of them asks the remote at a time.
  let follower = remote ? openFollower(store, remote, current) : null;
  let followed = remote;
  /**
   * A team that moves to another sync remote while this worker runs (`git handoff remote --url`):
   * new tasks come from the new remote's queue at once (claims already go through it); tasks in
   * flight came through the old one, whose follower looks for their cancels until they are over.
   */
  const followRemote = async () => {
    const now = await store.syncRemote();
    if (now !== remote) {
      opts.log(`the sync remote is now ${now ?? "none (this clone only)"}: taking tasks${now ? ` from ${now}` : " from this clone"}`);
      remote = now;
      queue = now ? followQueue(store, now, current) : null;
    }
    if (followed !== remote && !running.size) {
      follower?.close();
      follower = remote ? openFollower(store, remote, current) : null;
      followed = remote;
    }
  };
  /** A task cancelled (or taken over) while its command runs is noticed within one poll. */
  const checkRunning = async () => {
    // A task whose command has ended is being completed: a look for its cancel would only compete
    // with the completion's push.
    const live = [...running].filter(([, r]) => !r.stop.signal.aborted && !r.ran);
    // A remote that cannot be read leaves the local view: the renewals then say what is wrong.
    if (follower && live.length) await follower.look(live.map(([id]) => taskRef(id)));
    for (const [id, r] of live) {
      const { task } = await loadTask(store, id);
      const now = settle(task, { actor: store.actor, now: store.now() }).record;
      if (isFinal(now.status) || now.claim?.agent !== store.actor.agent) {
        r.why = "cancelled";
        r.stop.abort();
      }
    }
  };

  while (!opts.signal.aborted) {
    // One look per poll interval, start to start: the time a look takes is not added to the wait.
    const round = Date.now();
    // A policy that cannot be read (malformed, committed meanwhile) stops new claims, not the
    // tasks in progress: they finish under the Store in use, and each round tries again.
    let claiming = true;
    try {
      store = await fresh.get();
      if (lastOpenProblem) opts.log("the policy reads again: taking tasks");
      lastOpenProblem = "";
    } catch (e) {
      if (!(e instanceof HandoffError)) throw e;
      if (e.message !== lastOpenProblem) opts.log(`cannot take tasks: ${e.message}`);
      lastOpenProblem = e.message;
      claiming = false;
    }
    await followRemote().catch((e) => opts.log(`cannot read the sync remote's name: ${(e as Error).message}`));
    await refreshHeartbeat(store); // throttled: writes only once heartbeat_interval has passed
    if (running.size) await checkRunning().catch((e) => opts.log(`cannot check running tasks: ${(e as Error).message}`));
    while (claiming && !opts.signal.aborted && running.size < opts.concurrency && !(opts.once && started >= 1)) {
      const task = await claimer.claim();
      if (!task || opts.signal.aborted) {
        if (task) await release(store, task.id).catch(() => {});
        // --once with nothing to take but tasks that wait for a person's approval here: waiting
        // would be forever for a script that runs it; it ends and says so (the CLI exits 3).
        const held = !task && opts.once && started === 0 ? claimer.heldForApproval() : [];
        if (held.length) summary.heldForApproval = held;
        break;
      }
      started++;
      opts.log(`${task.id}: claimed (fence ${task.claim?.fence}): ${task.objective.split("\n")[0]!.slice(0, 100)}`);
      const rejected = rejectionToRework(task);
      if (rejected) opts.log(`${task.id}: again after a rejection by ${rejected.by}${rejected.reason ? `: ${rejected.reason.split("\n")[0]!.slice(0, 200)}` : ""} (the command gets it as HANDOFF_REJECTION)`);
      const r: Running = { stop: new AbortController(), why: null, finished: Promise.resolve(), ran: false };
      r.finished = workOn(run, task, r).finally(() => {
        running.delete(task.id);
        tick.abort();
      });
      running.set(task.id, r);
    }
    if (opts.once && ((started >= 1 && running.size === 0) || summary.heldForApproval)) break;
    await pause(Math.max(0, opts.pollMs - (Date.now() - round)), AbortSignal.any([opts.signal, tick.signal]));
    if (tick.signal.aborted) tick = new AbortController();
  }
  for (const r of running.values()) {
    r.why = "interrupted";
    r.stop.abort();
  }
  await Promise.all([...running.values()].map((r) => r.finished));
  await spare.dispose();
  follower?.close();
  await endSessionFor(store).catch(() => {}); // others see it gone at once, not after it goes stale
  return summary;
}
