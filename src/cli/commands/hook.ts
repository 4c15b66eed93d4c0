import type { Command } from "commander";
import { fail } from "../../core/errors.ts";
import { HOOK_NAMES } from "../../hooks/hook-names.ts";
import { completes } from "../completes.ts";

// `git handoff hook <name>` is served by its own bundle (dist/hook-main.cjs, no commander); this
// entry only gives it a place in --help, and explains a build that lacks the bundle.
export function registerHook(program: Command): void {
  completes(program.command("hook").description(`run a hook (installed by init): ${HOOK_NAMES.join(", ")}`).argument("<name>"), { name: HOOK_NAMES })
    .allowUnknownOption()
    .action(() => fail("internal", "the hook bundle dist/hook-main.cjs is missing: run npm run build"));
}
