// The tasks a worker does not take again after giving one back. A task it could not set up (a base
// it cannot check out, a worktree git refused, a fault of this machine's) is never taken again
// here, or one broken task would be claimed on every poll. A task given back after a failure that
// may pass (the sync remote timed out or could not be reached, a push's outcome unknown: the
// recoverable codes) rests for a while and is then taken again: a lone worker would otherwise
// leave it in the queue for good after one network hiccup.
import { isRecoverable, type ErrorCode } from "../core/errors.ts";

/** How long a task given back after a failure that may pass is left to other workers. */
export const REST_AFTER_PASSING_FAILURE_MS = 60_000;

export class WorkerSkips {
  private readonly never = new Set<string>();
  private readonly until = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Whether the worker leaves `id` alone now. */
  has(id: string): boolean {
    if (this.never.has(id)) return true;
    const t = this.until.get(id);
    if (t === undefined) return false;
    if (this.now() < t) return true;
    this.until.delete(id);
    return false;
  }

  /**
   * Gives `id` back after a failure with `code` (undefined: not one of ours, an unexpected error):
   * for a while when the failure may pass, for good otherwise. Says which, for the worker's log.
   */
  gaveBack(id: string, code: ErrorCode | undefined): "rests" | "never" {
    if (code !== undefined && isRecoverable(code)) {
      this.until.set(id, this.now() + REST_AFTER_PASSING_FAILURE_MS);
      return "rests";
    }
    this.never.add(id);
    return "never";
  }
}
