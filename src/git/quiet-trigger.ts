/**
 * Background work of a long-running process, started once the process has been quiet for a
 * moment. Making temp files ahead of need and removing replaced ref files take disk work and, on
 * libuv's thread pool, CPU: started at the first await after a write, they ran in the middle of
 * the request that used them and took 1.5-2 ms of a 5-6 ms MCP claim on two cores (the thread
 * pool and the main thread then share them). Started after a quiet spell, they run between
 * requests instead. A pool that runs low is refilled at once by its owner (a burst of writes
 * with no quiet spell must not drain it).
 */
export class QuietTrigger {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly work: () => void,
    private readonly quietMs = QUIET_MS,
  ) {}

  /** Runs the work once nothing has poked for `quietMs`; each poke starts the wait again. */
  poke(): void {
    if (this.timer) this.timer.refresh();
    else
      this.timer = setTimeout(() => {
        this.timer = null;
        this.work();
      }, this.quietMs).unref();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/**
 * How long without a write counts as quiet. The writes of one request follow each other within
 * a fraction of a millisecond; an agent's next call comes after its client has read the answer.
 */
export const QUIET_MS = 2;
