// The bundle of the views over the whole history (`events`, `status`, `stats`): the same commands
// as the full CLI, built by the same code from the same register functions, with only their
// modules. A view is one read of many refs and an index; loading every other verb's code too was
// a fifth of a cold `events --agent X --limit 20` at 1,000 tasks.
import { registerEvents } from "./commands/events.ts";
import { registerStats } from "./commands/stats.ts";
import { registerStatus } from "./commands/status.ts";
import { buildFrom, type Register } from "./program-builder.ts";
import { runProgram } from "./run-program.ts";

/** In program.ts's order; a test checks it against program.ts's VERBS and VIEW_VERBS. */
export const VIEW_TABLE: [Register, string[]][] = [
  [registerEvents, ["events"]],
  [registerStatus, ["status"]],
  [registerStats, ["stats"]],
];

export function run(argv: string[]): void {
  runProgram((a) => buildFrom(VIEW_TABLE, a), argv);
}
