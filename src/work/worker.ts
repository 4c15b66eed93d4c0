// The worker: takes ready tasks addressed to it or to anyone through the sync remote (exclusive
// claims), runs the local user's command for each, renews each claim at a third of its TTL while
// it works, and sends back the output and result files. A task with a verify command is finished
// as `done` finishes it: the command runs (only if written or approved in this clone) and the task
// goes to review, or fails when it does not pass; one whose command is not approved here is left
// in the queue (worker-choice.ts). It lives below the front ends so other loops (an agent
// CLI driver, an MCP tool) can share it. A worker runs for hours: it takes its Store from a
// FreshStore at every step, so a policy merged on the integration branch (or a changed git config)
// applies to its next claim, renewal and completion, never only after a restart.
import { beat } from "../core/agent.ts";
import { parseDuration } from "../core/duration.ts";
import { HandoffError } from "../core/errors.ts";
import { isFinal, type Task } from "../core/task.ts";
import { settle } from "../core/task-ops.ts";
import { TaskResultFiles } from "../core/task-files.ts";
import { endSessionFor, mutateOwnAgent, refreshHeartbeat } from "../store/agent-store.ts";
import { localMachine } from "../store/machine.ts";
import type { FreshStore } from "../store/fresh-store.ts";
import type { Store } from "../store/store.ts";
import { claimNextTask, release, renew } from "../store/task-actions.ts";
import { loadTask, taskRef } from "../store/task-store.ts";
import { pause } from "../sync/follow-ref.ts";
import { followQueue } from "../sync/follow-queue.ts";
import { openFollower } from "../sync/shared-poll.ts";
import { defaultBase } from "./run-task.ts";
import { spareWorktrees } from "./spare-worktree.ts";
import { trace } from "../sync/trace.ts";
import { readQuarantine } from "../sync/quarantine.ts";
import { repairAdvice } from "../sync/repair-hazard.ts";
import { finishWithResults } from "./complete.ts";
import { inputsRef, readBundle, RESULT_FILE, resultsRef } from "./bundle.ts";
import { loadInputs } from "./handover.ts";
import { agentLaunch, agentPrompt, type AgentSetup } from "./agent-command.ts";
import { runTask } from "./run-task.ts";
import { sweepLeftovers } from "./leftovers.ts";
import { workerEnv } from "./self-delegation.ts";
import { approvedHere } from "../store/approvals.ts";
import { runForReview, verificationToRun } from "../store/review-actions.ts";
import { verificationFailedReason, type Submission } from "../core/review.ts";
import { workerPassOver } from "../core/worker-choice.ts";

/** A completion that did not reach the remote, or whose report did not come back: sent again. */
const NOT_SENT = new Set(["remote_unreachable", "remote_timeout", "outcome_unknown"]);

/** Whether the task's results ref holds `record` (this worker's result, landed by a push whose report was lost). */
async function resultLanded(store: Store, record: TaskResultFiles): Promise<boolean> {
  const tip = await store.readRef(resultsRef(record.task));
  if (!tip) return false;
  const got = await readBundle(store, resultsRef(record.task), tip, RESULT_FILE, TaskResultFiles).catch(() => null);
  return !!got && got.record.worker === record.worker && got.record.status === record.status && got.record.output === record.output;
}

/** Renewals (at a third of the TTL) of leases at least this long may wait for the push budget's minute. */
const DEFERRABLE_TTL_MS = 3 * 60_000;

export interface WorkerOptions {
  /** The local user's command line; ignored when `agent` says which client does each task. */
  command: string;
  /** `--with claude|codex`: the client run on each task, its prompt built by agent-command.ts. */
  agent?: AgentSetup;
  once: boolean;
  concurrency: number;
  pollMs: number;
  keep: boolean;
  /** Code changes go back as the branch handoff/<id> on the sync remote. */
  pushBranch?: boolean;
  /** `--addressed-only`: tasks addressed to anyone are left to others. */
  addressedOnly?: boolean;
  ttl?: string;
  /** Aborted on Ctrl-C: running commands stop and their tasks are released. */
  signal: AbortSignal;
  log: (line: string) => void;
  stderr: (chunk: Buffer) => void;
}

export interface WorkerSummary {
  done: number;
  /** Verified and sent to review (a task with a verify command). */
  review: number;
  failed: number;
  cancelled: number;
  released: number;
}

interface Running {
  stop: AbortController;
  why: "cancelled" | "interrupted" | null;
  finished: Promise<void>;
  /** The command has ended: a cancel can no longer stop it, so nobody looks for one. */
  ran: boolean;
}

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
  let lastProblem = "";
  let lastOpenProblem = "";

  // Idle workers, waiters and MCP watchers of this clone share their looks at the remote's queue:
  // one look per poll interval for all of them, however many there are.
  const current = () => fresh.getOrCurrent();
  let queue = remote ? followQueue(store, remote, current) : null;
  let lastLookProblem = "";
  // Tasks this worker could not set up (a base it cannot check out, a worktree git refused): given
  // back for others, never taken again here, or one broken task would be claimed on every poll.
  const unworkable = new Set<string>();
  // Tasks passed over for a verify command not approved here, said once each (by task and command).
  const toldUnapproved = new Set<string>();
  // The next task's worktree is made while the worker idles, not after its claim.
  const spare = spareWorktrees(cwd, store.repo.commonDir);
  const prepareSpare = () => spare.prepare(async () => defaultBase(await fresh.get()));
  prepareSpare();
  const claimOne = async (): Promise<Task | null> => {
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
        if (why?.data?.passed_over === "unapproved_command" && !toldUnapproved.has(told)) {
          toldUnapproved.add(told);
          opts.log(`${why.message}; ${why.suggestions![0]!.detail}`);
        }
        return why;
      };
      // --ttl, else the policy's claim_ttl as it is now.
      const t = await claimNextTask(store, { ttl: `${ttlGiven ?? store.config.claimTtlMs}ms`, refresh: !queue, skip: unworkable, passOver });
      lastProblem = "";
      trace(`worker: claimed ${t.id}`);
      return t;
    } catch (e) {
      if (!(e instanceof HandoffError)) throw e;
      if (e.code !== "no_task_ready" && e.message !== lastProblem) opts.log(`cannot claim: ${e.message}`);
      lastProblem = e.code === "no_task_ready" ? "" : e.message;
      return null;
    }
  };

  /**
   * Sends a finished task's result, again while the remote cannot take it (unreachable, too slow,
   * or the report of a push that went out lost): a push that failed once threw the command's
   * output and files away and left the task claimed until its lease ran out. Tried until the claim
   * ends (renewals go on meanwhile) or the worker stops; a refusal is final at once.
   */
  const deliver = async (record: TaskResultFiles, files: Map<string, Buffer>, claimEnds: () => number, submission?: Submission): Promise<void> => {
    let delay = 1000;
    let unknown = false;
    for (;;) {
      try {
        await finishWithResults(await fresh.getOrCurrent(), record, files, submission ? { submission } : {});
        return;
      } catch (e) {
        if (!(e instanceof HandoffError)) throw e;
        // A push whose report was lost may have landed: the task is then finished with this result.
        if (unknown && e.code === "final_state" && (await resultLanded(await fresh.getOrCurrent(), record))) return;
        if (!NOT_SENT.has(e.code) || opts.signal.aborted) throw e;
        if (Date.now() + delay >= claimEnds()) {
          throw new HandoffError({ code: e.code, message: `the result could not be sent before the claim ended: ${e.message}` });
        }
        unknown ||= e.code === "outcome_unknown";
        opts.log(`${record.task}: the result is not sent yet (${e.message}); trying again in ${Math.round(delay / 1000)}s`);
        await pause(delay, opts.signal);
        delay = Math.min(delay * 2, 30_000);
      }
    }
  };

  const work = async (task: Task, r: Running): Promise<void> => {
    const id = task.id;
    const ttlMs = task.claim?.ttl_ms ?? ttlGiven ?? store.config.claimTtlMs;
    // When the claim ends as far as this worker knows (each renewal that lands moves it).
    let claimEnds = task.claim ? Date.parse(task.claim.expires_at) : Date.now() + ttlMs;
    const renewal = setInterval(() => {
      // A lease with minutes to spare can wait for the push budget; a short one goes out at once.
      (async () => renew(await fresh.getOrCurrent(), id, { defer: ttlMs >= DEFERRABLE_TTL_MS }))().then((t) => {
        if (t.claim) claimEnds = Date.parse(t.claim.expires_at);
      }, (e) => {
        // Cancelled, finished or taken over meanwhile: the command has nothing left to do.
        if (e instanceof HandoffError && ["final_state", "held_by_other", "not_holder"].includes(e.code) && !r.stop.signal.aborted) {
          r.why = "cancelled";
          r.stop.abort();
        }
      });
    }, Math.max(50, Math.floor(ttlMs / 3)));
    // The task's worktree is removed once its result has gone out; the task counts as over after that.
    let cleanup: () => Promise<void> = () => Promise.resolve();
    try {
      // A results ref refused on receive (a hand-made one pushed over it) would refuse the
      // completion too: the command is not run for a result that cannot be sent.
      const refused = remote ? (await readQuarantine(await fresh.getOrCurrent(), remote)).entries.get(resultsRef(id)) : undefined;
      if (refused) {
        // What `sync --repair` would really do with it: overwrite it, or refuse without --force
        // (this clone has no results of its own for the task, say), as sync and status say. One
        // from a newer git-handoff is no repair's: upgrading reads it.
        const repair = (await repairAdvice(await fresh.getOrCurrent(), [refused])).get(refused.ref);
        const why = refused.kind === "newer" ? `comes from a newer git-handoff (${refused.reason})` : `was refused on receive (${refused.reason})`;
        throw new HandoffError({ code: "corrupt_state", message: `${resultsRef(id)} on ${remote} ${why}; its result could not be sent: ${repair?.hint ?? "upgrade git-handoff to read it"}`, data: { ref: resultsRef(id), ...(repair ? { repair } : {}) } });
      }
      // A task and its inputs are created in one push, and every refresh that finds a task (a
      // claim's, a sync's) fetches all refs that moved: the inputs are here if there are any.
      const inputs = await loadInputs(await fresh.getOrCurrent(), id, { pull: false });
      if (inputs?.unverified) opts.log(`${id}: its inputs are whatever ${inputsRef(id)} holds: the task (made by an older git-handoff) does not name them, so anyone who can push may have written them`);
      const context = inputs?.context ?? new Map<string, Buffer>();
      const files = inputs?.files ?? new Map<string, Buffer>();
      const agent = opts.agent;
      const run = await runTask({
        store: () => fresh.getOrCurrent(),
        cwd,
        task,
        command: agent ? (folder) => agentLaunch(agent, agentPrompt(task, context, [...files.keys()], folder), folder) : opts.command,
        // Who runs it: what the command does as git-handoff is done as this worker, and a task it
        // addresses back to this worker is refused (it would wait for itself).
        env: { HANDOFF_AGENT: store.actor.agent, ...workerEnv(store.actor.agent, machine, opts.concurrency) },
        context,
        files,
        keep: opts.keep,
        pushBranch: !!opts.pushBranch,
        signal: r.stop.signal,
        stderr: opts.stderr,
        cleanedUp: (remove) => (cleanup = remove),
        spare,
      });
      trace(`worker: ran ${id}`);
      if (run.kept) opts.log(`${id}: kept ${run.kept}`);
      // The review gate, as `done` keeps it: the task's verify command runs where the work was done,
      // refused (nothing runs, the task is released below) unless written or approved here.
      let submission: Submission | undefined;
      if (run.status === "done" && task.verify) {
        const s = await fresh.getOrCurrent();
        const { task: now, command } = await verificationToRun(s, id);
        opts.log(`${id}: verifying: ${command}`);
        submission = await runForReview(s, now, command, { cwd: run.worktree, commit: run.branch?.commit ?? null, signal: r.stop.signal });
      }
      // The claim is renewed until its result is out (deliver may wait for the remote).
      r.ran = true;
      // A verification that did not pass while the worker was told to stop was stopped: no verdict.
      if (run.status === "stopped" || (submission && !submission.verification.passed && r.stop.signal.aborted)) {
        clearInterval(renewal);
        if (r.why === "interrupted") {
          await release(await fresh.getOrCurrent(), id).then(() => summary.released++, (e) => opts.log(`${id}: could not release: ${(e as Error).message}`));
          opts.log(`${id}: stopped the command and released the task`);
        } else {
          summary.cancelled++;
          opts.log(`${id}: cancelled; stopped the command`);
        }
        return;
      }
      for (const f of run.refused) opts.log(`${id}: refused to send ${JSON.stringify(f.name)}: ${f.reason}`);
      const record: TaskResultFiles = {
        task: id,
        status: run.status,
        output: run.output,
        output_cut: run.cut,
        reason: run.reason,
        exit_code: run.exitCode,
        files: [...run.files].map(([name, b]) => ({ name, size: b.length })),
        refused: run.refused,
        worker: store.actor.agent,
        machine,
        at: store.now().toISOString(),
        ...(run.branch ? { branch: run.branch.name, commit: run.branch.commit } : {}),
      };
      await deliver(record, run.files, () => claimEnds, submission);
      trace(`worker: completed ${id}`);
      const pushed = run.branch ? `, code on branch ${run.branch.name}` : "";
      const sent = `(${run.files.size} file${run.files.size === 1 ? "" : "s"} sent back${pushed})`;
      const v = submission?.verification;
      if (v?.passed) {
        summary.review++;
        opts.log(`${id}: in review: verification passed in ${(v.duration_ms / 1000).toFixed(1)}s ${sent}`);
      } else if (v) {
        summary.failed++;
        opts.log(`${id}: failed: ${verificationFailedReason(v)} ${sent}`);
      } else {
        if (run.status === "done") summary.done++;
        else summary.failed++;
        opts.log(`${id}: ${run.status}${run.reason ? `: ${run.reason}` : ""} ${sent}`);
      }
    } catch (e) {
      opts.log(`${id}: ${(e as Error).message}`);
      if (!(e instanceof HandoffError) || !["final_state", "held_by_other", "not_holder"].includes(e.code)) {
        unworkable.add(id);
        await release(await fresh.getOrCurrent(), id).then(
          () => {
            summary.released++;
            opts.log(`${id}: released for another worker; this one will not take it again`);
          },
          () => {},
        );
      }
    } finally {
      clearInterval(renewal);
      await cleanup();
      // A --once worker takes no next task.
      if (!opts.signal.aborted && !opts.once) prepareSpare();
    }
  };

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
      const task = await claimOne();
      if (!task || opts.signal.aborted) {
        if (task) await release(store, task.id).catch(() => {});
        break;
      }
      started++;
      opts.log(`${task.id}: claimed (fence ${task.claim?.fence}): ${task.objective.split("\n")[0]!.slice(0, 100)}`);
      const r: Running = { stop: new AbortController(), why: null, finished: Promise.resolve(), ran: false };
      r.finished = work(task, r).finally(() => {
        running.delete(task.id);
        tick.abort();
      });
      running.set(task.id, r);
    }
    if (opts.once && started >= 1 && running.size === 0) break;
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
