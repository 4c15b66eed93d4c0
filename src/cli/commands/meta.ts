// Verbs about the tool itself: version and shell completion.
import type { Command } from "commander";
import { fail } from "../../core/errors.ts";
import { emit } from "../../present/output.ts";
import { completion, SHELLS, type Shell } from "../completion.ts";
import { completes } from "../completes.ts";
import { globals } from "../context.ts";

import { VERSION } from "../version.ts";

export { VERSION };

export function registerMeta(program: Command): void {
  program
    .command("version")
    .description("print git-handoff's version")
    .option("--json", "print JSON")
    // --json before the verb too (`git handoff --json version`), as for every other verb.
    .action((_o, cmd: Command) => emit(!!globals(cmd).json, { version: VERSION, node: process.versions.node }, () => `git-handoff ${VERSION}`));

  completes(
    program
      .command("completion")
      .description("print a shell completion script (bash, zsh or fish): verbs, options, task ids and agent names (read when TAB is pressed), statuses and other fixed values")
      .argument("<shell>", "bash, zsh or fish"),
    { shell: SHELLS },
  ).action((shell: string) => {
    if (!(SHELLS as readonly string[]).includes(shell)) fail("invalid_input", `no completion for ${JSON.stringify(shell)}: choose bash, zsh or fish`);
    process.stdout.write(completion(program, shell as Shell));
  });
}
