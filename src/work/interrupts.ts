// Ctrl-C and SIGTERM for the verbs that run until stopped (wait, worker, loop run, test, dashboard):
// the first stops them cleanly, a second one later quits at once.
//
// Run as `git handoff VERB`, git-handoff is git's dashed external: a terminal's Ctrl-C reaches the
// whole process group, git included, and git passes its own copy on to its child (run-command's
// clean_on_exit). So one Ctrl-C often arrives twice, milliseconds apart (in about a third of
// tries here; the kernel merges the two when the first is still pending). Taken as a second
// Ctrl-C, that copy cut the cleanup short: a wait's task left queued, a worker's task left claimed,
// a loop left running with its agents. A repeat within SAME_INTERRUPT_MS of the first is therefore
// the same Ctrl-C; only one after that quits at once.

/** A repeat this soon after the first signal is the same Ctrl-C (git's copy arrives within milliseconds). */
export const SAME_INTERRUPT_MS = 1000;

const SIGNALS = ["SIGINT", "SIGTERM"] as const;

export interface Interrupts {
  /** Aborted at the first SIGINT or SIGTERM. */
  readonly signal: AbortSignal;
  /** Whether one arrived. */
  readonly interrupted: boolean;
  /** Takes the handlers off again. */
  close(): void;
}

/**
 * Until close(): the first SIGINT or SIGTERM calls `first` (say what stopping does) and aborts
 * `signal`; a repeat within SAME_INTERRUPT_MS is ignored; a later one exits at once with 130 (the
 * exit-code table's interrupted).
 */
export function catchInterrupts(first: () => void = () => {}): Interrupts {
  const stop = new AbortController();
  let at: number | null = null;
  const onSignal = () => {
    const now = performance.now();
    if (at === null) {
      at = now;
      first();
      stop.abort();
    } else if (now - at >= SAME_INTERRUPT_MS) process.exit(130);
  };
  for (const s of SIGNALS) process.on(s, onSignal);
  return {
    signal: stop.signal,
    get interrupted() {
      return at !== null;
    },
    close() {
      for (const s of SIGNALS) process.off(s, onSignal);
    },
  };
}
