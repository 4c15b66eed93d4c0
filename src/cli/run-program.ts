// One command line through a commander program: usage, help, commander's own errors and the
// exit status, for the full CLI (cli-main.ts) and the bundle of the hot verbs (hot-main.ts) alike.
import { CommanderError } from "commander";
import type { Command } from "commander";
import { errorBody, reportError } from "../present/output.ts";
import { exitWhenIdle } from "./exit-when-idle.ts";

const SHORT_USAGE = `usage: git handoff <verb> [options]

  git handoff init                   set up this repository (hooks for git and agents)
  git handoff task add <objective>   add a task
  git handoff claim --next           take the best ready task
  git handoff status                 who holds what
  git handoff help [verb]            every verb, or one verb's options and examples
`;

/** Commander's own errors are usage errors (exit 2); help and version are not errors at all. */
async function main(build: (argv: string[]) => Command, argv: string[]): Promise<number> {
  const wantsJson = argv.includes("--json");
  if (!argv.length) {
    // No verb is a usage error: a short usage on stderr, the project's usage status.
    process.stderr.write(SHORT_USAGE);
    return 2;
  }
  // `git handoff help task add` is `git handoff task add --help`: git itself turns --help into man.
  const program = build(argv);
  if (argv[0] === "help" && argv.length > 1) {
    const verb = argv[1]!;
    if (!program.commands.some((c) => c.name() === verb || c.aliases().includes(verb))) {
      process.stderr.write(`git-handoff: no verb ${JSON.stringify(verb)}; git handoff help lists them\n`);
      return 2;
    }
    argv = [...argv.slice(1).filter((a) => a !== "--json"), "--help"];
  }
  try {
    await program.parseAsync(argv, { from: "user" });
    return Number(process.exitCode ?? 0); // a command may answer with a status (check: 3 on deny)
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.help" || e.code === "commander.version") return 0;
      // commander already printed the message; with --json the error body goes to stdout as for any
      // refusal. An unknown verb or option, a missing argument: the command line itself is wrong.
      if (wantsJson) {
        const message = e.message.replace(/^error: /, "");
        process.stdout.write(JSON.stringify({ error: errorBody({ code: "usage", message, suggestions: [{ action: "fix_input", detail: "git handoff help <verb> shows how to use it" }] }) }, null, 2) + "\n");
      }
      return 2;
    }
    return reportError(e, wantsJson);
  }
}

/** Runs one command line through the program `build` makes for it, setting the exit status. */
export function runProgram(build: (argv: string[]) => Command, argv: string[]): void {
  main(build, argv).then((code) => {
    // A command that printed its own report may have set a failing status (doctor): keep it.
    process.exitCode = code || process.exitCode || 0;
    exitWhenIdle();
  });
}
