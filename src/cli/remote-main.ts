// The bundle of the verbs that talk to the sync remote and wait on it (`sync`, `remote`, `wait`):
// the same commands as the full CLI, built by the same code from the same register functions, with
// only their modules. A waiter's start-up is on a handover's round trip, and a sync with nothing
// new is one listing: loading the whole CLI was a large part of either.
import { registerSync } from "./commands/sync.ts";
import { registerWait } from "./commands/wait.ts";
import { buildFrom, type Register } from "./program-builder.ts";
import { runProgram } from "./run-program.ts";

/** In program.ts's order; a test checks it against program.ts's VERBS and REMOTE_VERBS. */
export const REMOTE_TABLE: [Register, string[]][] = [
  [registerSync, ["remote", "sync", "sync-conflicts"]],
  [registerWait, ["wait"]],
];

export function run(argv: string[]): void {
  runProgram((a) => buildFrom(REMOTE_TABLE, a), argv);
}
