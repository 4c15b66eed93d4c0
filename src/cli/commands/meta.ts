// Verbs about the tool itself: version and shell completion.
import type { Command } from "commander";
import { fail } from "../../core/errors.ts";
import { emit } from "../../present/output.ts";
import { completion } from "../reference.ts";

import { VERSION } from "../version.ts";

export { VERSION };

export function registerMeta(program: Command): void {
  program
    .command("version")
    .description("print git-handoff's version")
    .option("--json", "print JSON")
    .action((o: { json?: boolean }) => emit(!!o.json, { version: VERSION, node: process.versions.node }, () => `git-handoff ${VERSION}`));

  program
    .command("completion")
    .description("print a shell completion script (bash, zsh or fish); bash also completes `git handoff <TAB>`")
    .argument("<shell>", "bash, zsh or fish")
    .action((shell: string) => {
      if (!["bash", "zsh", "fish"].includes(shell)) fail("invalid_input", `no completion for ${JSON.stringify(shell)}: choose bash, zsh or fish`);
      process.stdout.write(completion(program, shell));
    });
}
