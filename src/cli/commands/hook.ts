import type { Command } from "commander";
import { fail } from "../../core/errors.ts";
import { HOOK_NAMES } from "../../hooks/hook-names.ts";
import { completes } from "../completes.ts";

// `git handoff hook <name>` is served by bundles of its own (dist/pre-edit-main.cjs for the agents'
// pre-edit hooks, dist/hook-main.cjs for the others; no commander); this entry is their help
// (`hook --help` too: the dispatcher sends it here), and explains a build that lacks them.
export function registerHook(program: Command): void {
  completes(
    program
      .command("hook")
      .description(
        `run a hook (installed by init): ${HOOK_NAMES.join(", ")}. Agent hooks read the agent's JSON on stdin. ` +
          "On an unexpected error a hook fails open (with a warning) unless .handoff.yaml says mode: strict; HANDOFF_HOOK_TIMEOUT_MS bounds it (default 5000)",
      )
      .argument("<name>", "the hook")
      .argument("[args...]", "what git passes the hook (pre-push: the remote's name and URL)"),
    { name: HOOK_NAMES },
  )
    .allowUnknownOption()
    .action(() => fail("internal", "the hook bundle (dist/hook-main.cjs or dist/pre-edit-main.cjs) is missing: run npm run build"));
}
