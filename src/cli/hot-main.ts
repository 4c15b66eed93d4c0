// The bundle of the hot verbs (command-line.ts HOT_VERBS): the same commands as the full CLI,
// built by the same code, with only the modules these verbs import, so a cold `claim`, `check` or
// `task show` loads and initialises about 60% of the full CLI's code.
// Their plain command lines (`task show t1`, `check src/a.ts`, `claim t1 --agent a`) are read
// without commander (fast-line.ts), which is then never set up (scripts/lazy-commander.mjs).
import { CLAIM, registerClaim } from "./commands/claim.ts";
import { CHECK, registerLease } from "./commands/lease.ts";
import { registerTask, TASK_SHOW } from "./commands/task.ts";
import { fastLine } from "./fast-line.ts";
import { buildFrom, type Register } from "./program-builder.ts";
import { runAction, runProgram } from "./run-program.ts";
import type { Verb } from "./verb-command.ts";

/** In program.ts's help order; a test checks it against program.ts's VERBS and HOT_VERBS. */
export const HOT_TABLE: [Register, string[]][] = [
  [registerTask, ["task", "tasks"]],
  [registerClaim, ["claim", "renew", "release", "done", "fail", "reclaim", "cancel"]],
  [registerLease, ["lease", "unlease", "leases", "check"]],
];

/** The verbs whose plain command lines fast-line.ts reads. */
export const FAST_VERBS: readonly Verb[] = [TASK_SHOW, CHECK, CLAIM];

export function run(argv: string[]): void {
  const line = fastLine(FAST_VERBS, argv);
  if (line) return runAction(() => line.verb.run(line.args, line.opts), argv);
  runProgram((a) => buildFrom(HOT_TABLE, a), argv);
}
