// The bundle of `wait` (a waiter's start-up is on the handover's round trip): the same command as
// the full CLI, built by the same code from the same register function, with only its modules.
import { registerWait } from "./commands/wait.ts";
import { buildFrom, type Register } from "./program-builder.ts";
import { runProgram } from "./run-program.ts";

export const WAIT_TABLE: [Register, string[]][] = [[registerWait, ["wait"]]];

export function run(argv: string[]): void {
  runProgram((a) => buildFrom(WAIT_TABLE, a), argv);
}
