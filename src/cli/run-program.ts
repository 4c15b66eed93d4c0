// One command line through a commander program: usage, help, commander's own errors and the
// exit status, for the full CLI (cli-main.ts) and the bundle of the hot verbs (hot-program.ts) alike;
// and the same answer for an action read without commander (runAction: hot-main.ts).
import { CommanderError } from "commander";
import type { Command } from "commander";
import { HandoffError } from "../core/errors.ts";
import { outputFailure, reportError } from "../present/output.ts";
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
    return statusAfterAnswer();
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.version") return 0;
      // A group verb without its sub-verb (`git handoff task`): commander printed the group's help
      // on stderr; the command line is still incomplete.
      if (e.code === "commander.help") return e.exitCode === 0 ? 0 : 2;
      // An unknown verb or option, a missing argument: the command line itself is wrong. Reported as
      // any refusal is (commander prints nothing itself: program-builder.ts).
      return reportError(new HandoffError({ code: "usage", message: parserMessage(e.message), suggestions: [{ action: "fix_input", detail: helpHint(program, argv) }] }), wantsJson);
    }
    return reportError(e, wantsJson);
  }
}

/** The status of a command whose action returned. */
function statusAfterAnswer(): number {
  // A command whose output could not be written (a full disk under stdout) did its work but
  // failed to report it: the machine's status, unless the command already answered one.
  const lost = outputFailure();
  if (lost && !process.exitCode) return reportError(new HandoffError(lost), false);
  return Number(process.exitCode ?? 0); // a command may answer with a status (check: 3 on deny)
}

/** commander's message on one line: `error: unknown command 'clam'\n(Did you mean claim?)` -> `unknown command 'clam' (did you mean claim?)`. */
function parserMessage(message: string): string {
  return message
    .replace(/^error: /, "")
    .split("\n")
    .filter(Boolean)
    .map((line) => line.replace(/^\(Did you mean/, "(did you mean"))
    .join(" ");
}

/** Where to read how to use what was typed: the deepest verb of the command line that exists. */
function helpHint(program: Command, argv: string[]): string {
  const path: string[] = [];
  let at = program;
  for (const word of argv) {
    if (word.startsWith("-")) continue;
    const sub = at.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!sub) break;
    path.push(sub.name());
    at = sub;
  }
  return path.length ? `git handoff help ${path.join(" ")} shows how to use it` : "git handoff help lists every verb";
}

/** Runs one command line through the program `build` makes for it, setting the exit status. */
export function runProgram(build: (argv: string[]) => Command, argv: string[]): void {
  exitWith(main(build, argv));
}

/**
 * Runs a command's action read without commander (fast-line.ts), answering as runProgram does
 * once commander has handed the action over: its status, or its refusal reported (the JSON body
 * when the command line has --json).
 */
export function runAction(action: () => Promise<void>, argv: string[]): void {
  const wantsJson = argv.includes("--json");
  exitWith(
    (async () => {
      try {
        await action();
        return statusAfterAnswer();
      } catch (e) {
        return reportError(e, wantsJson);
      }
    })(),
  );
}

function exitWith(status: Promise<number>): void {
  status.then((code) => {
    // A command that printed its own report may have set a failing status (doctor): keep it.
    process.exitCode = code || process.exitCode || 0;
    exitWhenIdle();
  });
}
