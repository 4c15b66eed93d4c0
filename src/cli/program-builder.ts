// The commander program of a command line, from a table of register functions and the verbs each
// adds. The full CLI (program.ts) and the bundle of the hot verbs (hot-program.ts) build it alike, so
// a verb reads the same from either.
import { Command } from "commander";
import { fail } from "../core/errors.ts";
import { verbAt, verbOf } from "./command-line.ts";
import { completes } from "./completes.ts";
import { examplesOf } from "./examples.ts";
import { VERSION_LINE } from "./version.ts";

export { verbOf };

/**
 * Adds a group of verbs to the program; given `verb` (the one the command line runs, one of the
 * group's), a group may add only that one: building a verb's options costs a cold command about
 * 0.03 ms each (the claim group's seven verbs 0.6 ms, claim alone 0.4). `sub` is the word after
 * the verb (`show` in `task show t1`): a verb with subcommands may add only the one it names.
 */
export type Register = (program: Command, verb?: string, sub?: string) => void;

/** Verbs that read the whole program (completion lists every verb): always built in full. */
const NEEDS_ALL = new Set(["completion", "help"]);

/**
 * The program with every verb of `verbs`, or (given the command line) with only the group of the
 * verb it runs, when `verbs` has it; unknown verbs, help and completion get every verb.
 */
export function buildFrom(verbs: [Register, string[]][], argv?: string[]): Command {
  const program = new Command("git-handoff").description("coordinate parallel coding agents through git refs (refs/handoff/*)");
  const verb = argv ? verbOf(argv) : undefined;
  const only = verb !== undefined && !NEEDS_ALL.has(verb) ? verbs.filter(([, names]) => names.includes(verb)) : [];
  // The program's own options are read only before the verb (enablePositionalOptions below) and
  // shown only in the program's help: a command line that starts with its verb (`task show t1`,
  // as agents and hooks type them) never reads them, and is spared building six options and
  // their listeners (~0.1 ms of a cold command).
  if (!only.length || verbAt(argv!) !== 0) {
    program
      .version(VERSION_LINE)
      .option("-C <dir>", "run as if started in <dir>")
      .option("--agent <name>", "act as this agent (default: $HANDOFF_AGENT, else user@host[.worktree])")
      .option("--json", "print JSON")
      .option("--push", "send writes to the sync remote at once")
      .option("--offline", "grant exclusive operations tentatively when the sync remote is unreachable");
    completes(program, { "-C": "dir", "--agent": "agent" });
  }
  program
    // commander's own errors are reported by run-program.ts, as every refusal is (one
    // `git-handoff:` line, a fix_input hint naming the verb; with --json the error body).
    .configureOutput({ outputError: () => {} })
    // Options before the verb belong to the program, after it to the verb (each leaf repeats the
    // globals through withGlobals). Without this the program swallowed `events --agent NAME`, so
    // the filter was ignored and the name became the caller instead.
    .enablePositionalOptions()
    .exitOverride();
  const sub = argv ? argv[verbAt(argv) + 1] : undefined;
  if (only.length) for (const [register] of only) register(program, verb, sub);
  else for (const [register] of verbs) register(program);
  const exitOverrides = (c: Command): void => {
    for (const sub of c.commands) {
      sub.exitOverride();
      exitOverrides(sub);
    }
  };
  exitOverrides(program);
  // A command's examples, after its own help text (the last of what its help shows), looked up
  // when a help is shown: examples.ts is set up in a bundle only for a help (scripts/lazy-ours.mjs).
  program.addHelpText("afterAll", ({ command }) => {
    const path: string[] = [];
    for (let c: Command | null = command; c?.parent; c = c.parent) path.unshift(c.name());
    const examples = examplesOf(path.join(" "));
    return examples ? `\nExamples:\n${examples.map((e) => `  ${e}`).join("\n")}` : "";
  });
  program.hook("preAction", (_program, action) => refuseOptionsAsValues(action));
  return program;
}

/**
 * A value that is one of the command's own options was a value left out: `loop run --agent-cmd
 * --keep` ran `sh -c --keep`, `memory edit ID --text --json` stored the text "--json". Other text
 * that starts with '-' stays a value (a note may begin with "-v is broken"), as git's `-m` reads it.
 */
function refuseOptionsAsValues(action: Command): void {
  const flags = new Set<string>();
  for (let c: Command | null = action; c; c = c.parent) for (const o of c.options) for (const f of [o.long, o.short]) if (f) flags.add(f);
  for (let c: Command | null = action; c; c = c.parent) {
    for (const o of c.options) {
      if (!o.required && !o.optional) continue;
      const value: unknown = c.getOptionValue(o.attributeName());
      for (const v of Array.isArray(value) ? value : [value]) {
        if (typeof v === "string" && flags.has(v)) fail("usage", `option ${o.long ?? o.short} needs a value, got the option ${v}`);
      }
    }
  }
}
