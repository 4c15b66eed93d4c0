// `git handoff hook <agent's pre-edit hook>`: the bundle the dispatcher loads for the hook that runs
// before every agent edit (src/cli/git-handoff.ts). It holds only that hook (edit-hook.ts): the
// other hooks' code made its start and its module-level objects larger, and those objects share
// Node's first young generation (1 MB) with the answer's own: past it, a collection (~1 ms) came
// before the answer was written.
import { answerEdit } from "./edit-hook.ts";
import { AGENT_HOOKS } from "./hook-names.ts";
import { runHook } from "./hook-run.ts";
import { mark } from "./profile.ts";

mark("bundle loaded");

// Which of the answer's paths this run took: its code cache is written again for a path new to it.
export { codePaths } from "./edit-hook.ts";

export function run(argv: string[]): void {
  runHook(argv, Object.keys(AGENT_HOOKS), answerEdit);
}
