// Who ends the process when the reader of stdout is gone (EPIPE; EIO from a terminal that hung
// up). The dispatcher does, quietly, for a verb with nothing left to do but write (`git handoff
// status | head -1`). A verb that runs until stopped (catchInterrupts: wait, worker, loop, the MCP
// server) still has work to finish once its reader left: a wait's cleanup after a hang-up, the MCP
// server's push of its queued writes when the host closed both pipes. It says so here, drops what
// it cannot write, and ends the process itself. A mark on the process, not a module variable: the
// dispatcher and the verb's bundle are separate bundles, each with its own copy of this module.
const FINISHES = Symbol.for("git-handoff.finishes-without-reader");

type Marked = { [FINISHES]?: true };

/** From now on this process finishes its own work when stdout's reader is gone. */
export function finishWithoutReader(): void {
  (process as Marked)[FINISHES] = true;
}

/** Whether a verb said it finishes its own work when stdout's reader is gone. */
export function finishesWithoutReader(): boolean {
  return (process as Marked)[FINISHES] === true;
}
