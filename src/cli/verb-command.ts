// A verb defined once (verb-spec.ts) with the function that runs it: commander's command is built
// from the spec and its action calls that function with what commander read, and fast-line.ts
// calls the same function with what it read of a plain command line. Both paths run the same code.
import type { Command } from "commander";
import { collect, globals, withGlobals, type GlobalOptions } from "./context.ts";
import type { VerbSpec } from "./verb-spec.ts";

/**
 * `run` takes the verb's arguments as commander hands them to an action (one value per declared
 * argument: a string, undefined for an optional one left out, an array for a variadic one) and
 * its options merged with the global ones (commander's `optsWithGlobals()`).
 */
export interface Verb {
  readonly spec: VerbSpec;
  readonly run: (args: unknown[], opts: GlobalOptions & Record<string, unknown>) => Promise<void>;
}

/** A verb of `spec` run by `run`, typed as its spec says (the one place the types are taken on trust). */
export function verb<A extends unknown[], O extends object = object>(spec: VerbSpec, run: (args: A, opts: O & GlobalOptions) => Promise<void>): Verb {
  return { spec, run: run as unknown as Verb["run"] };
}

/** Adds `verb`'s command under `parent` (the program, or its group: `task` for `task show`). */
export function verbCommand(parent: Command, { spec, run }: Verb): Command {
  const cmd = parent.command(spec.words.at(-1)!).description(spec.description);
  for (const [name, description] of spec.args) cmd.argument(name, description);
  for (const o of spec.options) {
    if (o.hidden) cmd.addOption(cmd.createOption(o.flags, o.description).hideHelp());
    else if (o.repeat) cmd.option(o.flags, o.description, collect, o.default as string[] | undefined);
    else if (o.default !== undefined) cmd.option(o.flags, o.description, o.default as string);
    else cmd.option(o.flags, o.description);
  }
  // commander calls an action with the arguments, the command's own options and the command.
  return withGlobals(cmd, spec.globals).action((...a: unknown[]) => run(a.slice(0, -2), globals(a.at(-1) as Command) as GlobalOptions & Record<string, unknown>));
}
