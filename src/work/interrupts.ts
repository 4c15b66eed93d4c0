// Ctrl-C, SIGTERM and SIGHUP for the verbs that run until stopped (wait, worker, loop run, test,
// dashboard, mcp): the first stops them cleanly, a second one later quits at once.
//
// SIGHUP is the terminal going away (its window closed, an ssh connection dropped). Unhandled, it
// killed the process at once, as a second Ctrl-C does: a wait's task left queued, a worker's task
// left claimed, a loop left running. It is a request to stop like the others. The terminal is
// gone by then, so every line written to it fails (EIO on a terminal, EPIPE on a pipe whose reader
// ended): such errors of stdout and stderr are dropped from the first catchInterrupts on, or the
// first line the cleanup writes ("stopping ...") would end the process in the middle of it. And at
// exit Node puts back the settings of each terminal it started on: on a terminal gone that fails,
// and a Node without nodejs/node#58200 (20 here) aborts (SIGABRT, a core dump, nodejs/node#51519)
// after the cleanup has run. After a hang-up those descriptors are closed at exit, which Node's
// restore skips.
//
// Run as `git handoff VERB`, git-handoff is git's dashed external: a terminal's Ctrl-C reaches the
// whole process group, git included, and git passes its own copy on to its child (run-command's
// clean_on_exit). So one Ctrl-C often arrives twice, milliseconds apart (in about a third of
// tries here; the kernel merges the two when the first is still pending). Taken as a second
// Ctrl-C, that copy cut the cleanup short: a wait's task left queued, a worker's task left claimed,
// a loop left running with its agents. A repeat within SAME_INTERRUPT_MS of the first is therefore
// the same Ctrl-C; only one after that quits at once.

import { closeSync } from "node:fs";
import { isatty } from "node:tty";
import { finishWithoutReader } from "../present/reader-gone.ts";

/** A repeat this soon after the first signal is the same Ctrl-C (git's copy arrives within milliseconds). */
export const SAME_INTERRUPT_MS = 1000;

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** A write whose reader is gone: the terminal hung up (EIO), the pipe's reader ended (EPIPE). */
const READER_GONE = new Set(["EIO", "EPIPE", "ECONNRESET", "ERR_STREAM_DESTROYED"]);

/** Output nobody can read any more is dropped; any other error of the stream takes its course. */
function ignoreReaderGone(e: NodeJS.ErrnoException): void {
  if (!READER_GONE.has(e.code ?? "")) throw e;
  if (e.code === "EIO") forgetTerminalAtExit();
}

/** Of stdin, stdout and stderr, those that were terminals when the first handlers went on. */
let terminals: number[] | null = null;
let forgetting = false;

/** The terminal hung up: at exit its descriptors are closed, so Node does not abort restoring it. */
function forgetTerminalAtExit(): void {
  if (forgetting || !terminals?.length) return;
  forgetting = true;
  const fds = terminals;
  process.on("exit", () => {
    for (const fd of fds) {
      try {
        closeSync(fd);
      } catch {
        /* closed already */
      }
    }
  });
}

export interface Interrupts {
  /** Aborted at the first SIGINT, SIGTERM or SIGHUP. */
  readonly signal: AbortSignal;
  /** Whether one arrived. */
  readonly interrupted: boolean;
  /** Takes the handlers off again, unless a signal came (the process is then ending). */
  close(): void;
}

/**
 * Until close(): the first SIGINT, SIGTERM or SIGHUP calls `first` (say what stopping does) and
 * aborts `signal`; a repeat within SAME_INTERRUPT_MS is ignored; a later one exits at once with 130
 * (the exit-code table's interrupted). From then on, a stdout or stderr whose reader is gone is no error.
 * close() takes the handlers off only if no signal came.
 */
export function catchInterrupts(first: () => void = () => {}): Interrupts {
  const stop = new AbortController();
  let at: number | null = null;
  // Asked now: once the terminal hangs up, it no longer says it is one.
  terminals ??= [0, 1, 2].filter((fd) => isatty(fd));
  const onSignal = (signal: NodeJS.Signals) => {
    if (signal === "SIGHUP") forgetTerminalAtExit();
    const now = performance.now();
    if (at === null) {
      at = now;
      first();
      stop.abort();
    } else if (now - at >= SAME_INTERRUPT_MS) process.exit(130);
  };
  for (const s of SIGNALS) process.on(s, onSignal);
  // Never taken off: what the verb prints after close() (its summary, its --json answer) meets
  // the same gone reader. Added once per stream, however many times handlers are caught.
  for (const out of [process.stdout, process.stderr]) if (!out.listeners("error").includes(ignoreReaderGone)) out.on("error", ignoreReaderGone);
  // And the dispatcher, which ends a verb at its first write to a gone reader, leaves the end to this one.
  finishWithoutReader();
  return {
    signal: stop.signal,
    get interrupted() {
      return at !== null;
    },
    close() {
      // After an interrupt the process is on its way out: the handlers stay, so the same Ctrl-C's
      // copy (git's, held while the cleanup ran) is still the same one, not the default that ended
      // the process before its status and exit handlers, and a later Ctrl-C still exits with 130.
      if (at === null) for (const s of SIGNALS) process.off(s, onSignal);
    },
  };
}
