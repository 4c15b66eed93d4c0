// The hot bundle's commander program: every command line of the hot verbs that fast-line.ts does
// not read (their other verbs, help, usage errors, options before the verb). A family of its own in
// the bundle (scripts/lazy-ours.mjs): set up when such a line first needs it, so the plain lines
// never deserialise or set up the register functions, the program builder or what only they import.
import { registerClaim } from "./commands/claim.ts";
import { registerLease } from "./commands/lease.ts";
import { registerTask } from "./commands/task.ts";
import { buildFrom, type Register } from "./program-builder.ts";
import { runProgram } from "./run-program.ts";

/** In program.ts's help order; a test checks it against program.ts's VERBS and HOT_VERBS. */
export const HOT_TABLE: [Register, string[]][] = [
  [registerTask, ["task", "tasks"]],
  [registerClaim, ["claim", "renew", "release", "done", "fail", "reclaim", "cancel"]],
  [registerLease, ["lease", "unlease", "leases", "check"]],
];

/** Runs a command line of the hot verbs through commander (run-program.ts). */
export function runHotProgram(argv: string[]): void {
  runProgram((a) => buildFrom(HOT_TABLE, a), argv);
}
