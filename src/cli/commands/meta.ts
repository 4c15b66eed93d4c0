// Verbs about the tool itself: version and shell completion.
import type { Command } from "commander";
import { fail } from "../../core/errors.ts";
import { emit } from "../../present/output.ts";
import { completion, SHELLS, type Shell } from "../completion.ts";
import { completes } from "../completes.ts";
import { globals } from "../context.ts";
import { THIS_BUILD } from "../../core/build-identity.ts";
import { gitVersion } from "../../git/git-version.ts";
import { VERSION_LINE } from "../version.ts";

export function registerMeta(program: Command): void {
  program
    .command("version")
    .description("print git-handoff's version and the commit it was built from (as --version does); --json adds the Node.js and git versions")
    .option("--json", "print JSON")
    // --json before the verb too (`git handoff --json version`), as for every other verb. Only
    // the JSON asks git its version: the line is the build's constants alone.
    .action(async (_o, cmd: Command) => {
      const json = !!globals(cmd).json;
      const data = json ? { ...THIS_BUILD, node: process.versions.node, git: await gitVersion(process.cwd()) } : null;
      emit(json, data, () => VERSION_LINE);
    });

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
