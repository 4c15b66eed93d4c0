// One claimed task in a worker, from its command to its result: the claim renewed at a third of
// its TTL meanwhile, the task's verify command run as `done` runs it (the review gate), the result
// delivered (result-delivery.ts), and a task the worker cannot set up given back for others.
import { HandoffError } from "../core/errors.ts";
import { formatDuration } from "../core/duration.ts";
import { REST_AFTER_PASSING_FAILURE_MS, type WorkerSkips } from "./worker-skips.ts";
import { verificationFailedReason, type Submission } from "../core/review.ts";
import type { Task } from "../core/task.ts";
import type { TaskResultFiles } from "../core/task-files.ts";
import type { FreshStore } from "../store/fresh-store.ts";
import { runForReview, verificationToRun } from "../store/review-actions.ts";
import type { Store } from "../store/store.ts";
import { release, renew } from "../store/task-actions.ts";
import { readQuarantine } from "../sync/quarantine.ts";
import { repairAdvice } from "../sync/repair-hazard.ts";
import { trace } from "../sync/trace.ts";
import { agentLaunch, agentPrompt } from "./agent-command.ts";
import { inputsRef, resultsRef } from "./bundle.ts";
import { loadInputs } from "./handover.ts";
import { deliverResult } from "./result-delivery.ts";
import { runTask } from "./run-task.ts";
import { workerEnv } from "./self-delegation.ts";
import type { SpareWorktrees } from "./spare-worktree.ts";
import type { WorkerOptions, WorkerSummary } from "./worker-options.ts";

/** Renewals (at a third of the TTL) of leases at least this long may wait for the push budget's minute. */
const DEFERRABLE_TTL_MS = 3 * 60_000;

/** Refusals that say the task is no longer this worker's: cancelled, finished or taken over. */
const NOT_OURS = ["final_state", "held_by_other", "not_holder"];

/** A task in progress, as the worker's loop sees it. */
export interface Running {
  stop: AbortController;
  why: "cancelled" | "interrupted" | null;
  finished: Promise<void>;
  /** The command has ended: a cancel can no longer stop it, so nobody looks for one. */
  ran: boolean;
}

/** What a task's run shares with the worker that claimed it. */
export interface WorkerRun {
  fresh: FreshStore;
  opts: WorkerOptions;
  summary: WorkerSummary;
  /** The Store of the worker's current step. */
  store: () => Store;
  /** The sync remote as the worker last read its name. */
  remote: () => string | null;
  machine: string;
  cwd: string;
  ttlGiven: number | null;
  /** Tasks given back for others: never taken again here, or for a while after a failure that may pass (worker-skips.ts). */
  unworkable: WorkerSkips;
  spare: SpareWorktrees;
  /** Makes the next task's worktree while the worker idles. */
  prepareSpare: () => void;
}

export async function workOn(w: WorkerRun, task: Task, r: Running): Promise<void> {
  const { fresh, opts, summary } = w;
  const id = task.id;
  const ttlMs = task.claim?.ttl_ms ?? w.ttlGiven ?? w.store().config.claimTtlMs;
  // When the claim ends as far as this worker knows (each renewal that lands moves it).
  let claimEnds = task.claim ? Date.parse(task.claim.expires_at) : Date.now() + ttlMs;
  const renewal = setInterval(() => {
    // A lease with minutes to spare can wait for the push budget; a short one goes out at once.
    (async () => renew(await fresh.getOrCurrent(), id, { defer: ttlMs >= DEFERRABLE_TTL_MS }))().then((t) => {
      if (t.claim) claimEnds = Date.parse(t.claim.expires_at);
    }, (e) => {
      // Cancelled, finished or taken over meanwhile: the command has nothing left to do.
      if (e instanceof HandoffError && NOT_OURS.includes(e.code) && !r.stop.signal.aborted) {
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
    const remote = w.remote();
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
    const agentName = w.store().actor.agent;
    const run = await runTask({
      store: () => fresh.getOrCurrent(),
      cwd: w.cwd,
      task,
      command: agent ? (folder) => agentLaunch(agent, agentPrompt(task, context, [...files.keys()], folder), folder) : opts.command,
      // Who runs it: what the command does as git-handoff is done as this worker, and a task it
      // addresses back to this worker is refused (it would wait for itself).
      env: { HANDOFF_AGENT: agentName, ...workerEnv(agentName, w.machine, opts.concurrency) },
      context,
      files,
      keep: opts.keep,
      pushBranch: !!opts.pushBranch,
      signal: r.stop.signal,
      stderr: opts.stderr,
      cleanedUp: (remove) => (cleanup = remove),
      spare: w.spare,
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
    // The claim is renewed until its result is out (delivery may wait for the remote).
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
      worker: agentName,
      machine: w.machine,
      at: w.store().now().toISOString(),
      ...(run.branch ? { branch: run.branch.name, commit: run.branch.commit } : {}),
    };
    await deliverResult({ fresh, signal: opts.signal, log: opts.log, claimEnds: () => claimEnds }, record, run.files, submission);
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
    if (!(e instanceof HandoffError) || !NOT_OURS.includes(e.code)) {
      const rest = w.unworkable.gaveBack(id, e instanceof HandoffError ? e.code : undefined);
      await release(await fresh.getOrCurrent(), id).then(
        () => {
          summary.released++;
          opts.log(`${id}: released for another worker; ${rest === "rests" ? `this one may take it again in ${formatDuration(REST_AFTER_PASSING_FAILURE_MS)}` : "this one will not take it again"}`);
        },
        () => {},
      );
    }
  } finally {
    clearInterval(renewal);
    await cleanup();
    // A --once worker takes no next task.
    if (!opts.signal.aborted && !opts.once) w.prepareSpare();
  }
}
