// The bundle of the hot verbs (command-line.ts HOT_VERBS): the same commands as the full CLI,
// built by the same code, with only the modules these verbs import, so a cold `claim`, `check` or
// `task show` loads and initialises about 60% of the full CLI's code.
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

export function run(argv: string[]): void {
  runProgram((a) => buildFrom(HOT_TABLE, a), argv);
}
