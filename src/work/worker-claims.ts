// How a worker takes its next task: a look at the remote's queue (shared with the clone's other
// workers and waiters), then the best ready task it may take, passing over those it leaves to
// others (worker-choice.ts). Each problem is said once, not at every poll.
import { HandoffError } from "../core/errors.ts";
import type { Task } from "../core/task.ts";
import { workerPassOver } from "../core/worker-choice.ts";
import { approvedHere } from "../store/approvals.ts";
import type { Store } from "../store/store.ts";
import { claimNextTask } from "../store/task-actions.ts";
import type { QueueFollower } from "../sync/follow-queue.ts";
import { trace } from "../sync/trace.ts";
import type { WorkerOptions } from "./worker-options.ts";

export interface ClaimSource {
  opts: WorkerOptions;
  /** The Store of the worker's current step. */
  store: () => Store;
  /** The remote's queue, when there is a sync remote. */
  queue: () => QueueFollower | null;
  /** --ttl, when given (else the policy's claim_ttl as it is at each claim). */
  ttlGiven: number | null;
  /** Tasks this worker gave back and leaves alone now (worker-skips.ts). */
  unworkable: { has(id: string): boolean };
}

export interface TaskClaimer {
  /** Claims the next task for the worker, or null when there is none it may take now. */
  claim(): Promise<Task | null>;
  /**
   * When the last claim found nothing it may take: the ready tasks it passed over only because
   * their verify command waits for a person's approval here (by id). Empty otherwise.
   */
  heldForApproval(): string[];
}

export function taskClaimer(src: ClaimSource): TaskClaimer {
  const { opts } = src;
  let lastProblem = "";
  let lastLookProblem = "";
  // Tasks passed over for a verify command not approved here, said once each (by task and command).
  const toldUnapproved = new Set<string>();
  let unapproved = new Set<string>();
  let held: string[] = [];
  const claim = async (): Promise<Task | null> => {
    const store = src.store();
    unapproved = new Set();
    held = [];
    const queue = src.queue();
    try {
      if (queue) {
        const look = await queue.look();
        if (look.ok && look.changed) trace("worker: queue changed");
        const problem = look.ok ? "" : look.message;
        if (problem && problem !== lastLookProblem) opts.log(`cannot read the remote's queue: ${problem}`);
        if (!problem && lastLookProblem) opts.log(`the remote's queue reads again`);
        lastLookProblem = problem;
      }
      // Read at each claim: a command a person approves meanwhile is taken at the next poll.
      const approved = await approvedHere(store);
      const passOver = (candidate: Task) => {
        const why = workerPassOver(candidate, { addressedOnly: !!opts.addressedOnly, approved });
        const told = `${candidate.id}\0${candidate.verify}`;
        if (why?.data?.passed_over === "unapproved_command") {
          unapproved.add(candidate.id);
          if (!toldUnapproved.has(told)) {
            toldUnapproved.add(told);
            opts.log(`${why.message}; ${why.suggestions![0]!.detail}`);
          }
        }
        return why;
      };
      // --ttl, else the policy's claim_ttl as it is now.
      const t = await claimNextTask(store, { ttl: `${src.ttlGiven ?? store.config.claimTtlMs}ms`, refresh: !queue, skip: src.unworkable, passOver });
      lastProblem = "";
      trace(`worker: claimed ${t.id}`);
      return t;
    } catch (e) {
      if (!(e instanceof HandoffError)) throw e;
      if (e.code !== "no_task_ready" && e.message !== lastProblem) opts.log(`cannot claim: ${e.message}`);
      lastProblem = e.code === "no_task_ready" ? "" : e.message;
      if (e.code === "no_task_ready") held = [...unapproved].sort();
      return null;
    }
  };
  return { claim, heldForApproval: () => held };
}
