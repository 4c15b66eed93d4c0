// Sending a finished task's result from a worker: again while the remote cannot take it
// (unreachable, too slow, or the report of a push that went out lost). A push that failed once
// threw the command's output and files away and left the task claimed until its lease ran out.
import { HandoffError } from "../core/errors.ts";
import type { Submission } from "../core/review.ts";
import { TaskResultFiles } from "../core/task-files.ts";
import type { FreshStore } from "../store/fresh-store.ts";
import type { Store } from "../store/store.ts";
import { pause } from "../sync/follow-ref.ts";
import { loadTask } from "../store/task-store.ts";
import { loadResults } from "./handover.ts";
import { finishWithResults } from "./complete.ts";

/** A completion that did not reach the remote, or whose report did not come back: sent again. */
const NOT_SENT = new Set(["remote_unreachable", "remote_timeout", "outcome_unknown"]);

/**
 * Whether the task was finished with `record` (this worker's result, landed by a push whose report
 * was lost): the results its completion names, not whatever the results ref holds now (anyone who
 * can push may write that ref; the completion step binds the task to one results commit).
 */
async function resultLanded(store: Store, record: TaskResultFiles): Promise<boolean> {
  const got = await loadTask(store, record.task)
    .then(({ task }) => loadResults(store, task))
    .catch(() => null);
  return !!got && !got.unverified && got.record.worker === record.worker && got.record.status === record.status && got.record.output === record.output;
}

export interface Delivery {
  fresh: FreshStore;
  /** The worker stopping: no more tries. */
  signal: AbortSignal;
  log: (line: string) => void;
  /** When the claim ends as far as the worker knows (each renewal that lands moves it). */
  claimEnds: () => number;
}

/**
 * Tried until the claim ends (renewals go on meanwhile) or the worker stops; a refusal is final
 * at once.
 */
export async function deliverResult(d: Delivery, record: TaskResultFiles, files: Map<string, Buffer>, submission?: Submission): Promise<void> {
  let delay = 1000;
  let unknown = false;
  for (;;) {
    try {
      await finishWithResults(await d.fresh.getOrCurrent(), record, files, submission ? { submission } : {});
      return;
    } catch (e) {
      if (!(e instanceof HandoffError)) throw e;
      // A push whose report was lost may have landed: the task is then finished with this result.
      if (unknown && e.code === "final_state" && (await resultLanded(await d.fresh.getOrCurrent(), record))) return;
      if (!NOT_SENT.has(e.code) || d.signal.aborted) throw e;
      if (Date.now() + delay >= d.claimEnds()) {
        throw new HandoffError({ code: e.code, message: `the result could not be sent before the claim ended: ${e.message}` });
      }
      unknown ||= e.code === "outcome_unknown";
      d.log(`${record.task}: the result is not sent yet (${e.message}); trying again in ${Math.round(delay / 1000)}s`);
      await pause(delay, d.signal);
      delay = Math.min(delay * 2, 30_000);
    }
  }
}
