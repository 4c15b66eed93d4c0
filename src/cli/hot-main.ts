// The bundle of the hot verbs (command-line.ts HOT_VERBS): the same commands as the full CLI,
// built by the same code, with only the modules these verbs import, so a cold `claim`, `check` or
// `task show` loads and initialises about 60% of the full CLI's code. Their plain command lines
// (`task show t1`, `check src/a.ts`, `claim t1 --agent a`, `task add`, `task list`) are read without commander
// (fast-line.ts); the rest go to commander's program (hot-program.ts), which such a line never
// sets up, nor commander (scripts/lazy-ours.mjs, scripts/lazy-commander.mjs).
import { CHECK } from "./commands/check.ts";
import { CLAIM } from "./commands/claim-task.ts";
import { TASK_ADD } from "./commands/task-add.ts";
import { TASK_LIST, TASKS } from "./commands/task-list.ts";
import { TASK_SHOW } from "./commands/task-show.ts";
import { fastLine } from "./fast-line.ts";
import { runHotProgram } from "./hot-program.ts";
import { runAction } from "./run-program.ts";
import { reportError } from "../present/output.ts";
import type { Verb } from "./verb-command.ts";

/** The verbs whose plain command lines fast-line.ts reads. */
export const FAST_VERBS: readonly Verb[] = [TASK_SHOW, CHECK, CLAIM, TASK_ADD, TASK_LIST, TASKS];

export function run(argv: string[]): void {
  const line = fastLine(FAST_VERBS, argv);
  if (line) return runAction(() => line.verb.run(line.args, line.opts), argv);
  // Setting the program up reads its code from a file beside the bundle (scripts/lazy-file.mjs):
  // a file missing or of another build is one line and exit 1, not an uncaught stack trace.
  try {
    runHotProgram(argv);
  } catch (e) {
    process.exitCode = reportError(e, argv.includes("--json"));
  }
}
