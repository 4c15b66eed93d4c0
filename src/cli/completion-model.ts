// What the shell completion scripts complete, read from the commander program: each verb with its
// aliases, description, options and arguments, and what each value completes to (completes.ts).
// The three scripts (completion-bash.ts, -zsh.ts, -fish.ts) are renderings of this one tree.
import type { Argument, Command, Option } from "commander";
import { completesOf, type Completes } from "./completes.ts";

export interface OptionSpec {
  long?: string;
  short?: string;
  /** Whether it takes a value: commander reads the next word as it for both (`--verify [cmd]` too). */
  value: "none" | "required" | "optional";
  /** What its value is called in the help (`duration` for `--ttl <duration>`). */
  placeholder: string;
  description: string;
  completes?: Completes;
  repeatable: boolean;
}

export interface ArgumentSpec {
  name: string;
  variadic: boolean;
  completes?: Completes;
}

export interface VerbSpec {
  name: string;
  aliases: string[];
  description: string;
  options: OptionSpec[];
  args: ArgumentSpec[];
  subs: VerbSpec[];
}

const HELP: OptionSpec = { long: "--help", short: "-h", value: "none", placeholder: "", description: "show this verb's help", repeatable: false };

function optionSpec(o: Option): OptionSpec {
  const kind = completesOf(o);
  return {
    ...(o.long ? { long: o.long } : {}),
    ...(o.short ? { short: o.short } : {}),
    value: o.required ? "required" : o.optional ? "optional" : "none",
    placeholder: /[<[]([^>\]]+)[>\]]/.exec(o.flags)?.[1] ?? "",
    description: o.description,
    ...(kind ? { completes: kind } : {}),
    // A value collected into a list (`--scope`, `--tag`) may be given again.
    repeatable: !!(o as Option & { parseArg?: unknown }).parseArg || o.variadic,
  };
}

function argumentSpec(a: Argument): ArgumentSpec {
  const kind = completesOf(a);
  return { name: a.name(), variadic: a.variadic, ...(kind ? { completes: kind } : {}) };
}

function verbSpec(c: Command): VerbSpec {
  return {
    name: c.name(),
    aliases: c.aliases(),
    description: c.description(),
    options: [...c.options.filter((o) => !o.hidden).map(optionSpec), HELP],
    args: c.registeredArguments.map(argumentSpec),
    subs: c.commands.filter((s) => !(s as Command & { _hidden?: boolean })._hidden).map(verbSpec),
  };
}

/** The program as a tree whose root is `git handoff` itself (its options go before the verb). */
export function completionTree(program: Command): VerbSpec {
  return verbSpec(program);
}

/**
 * `git handoff help [verb [sub-verb]]` (run-program.ts) is not among the commands: each script
 * offers it beside the verbs, and the verbs after it.
 */
export const HELP_VERB = { name: "help", description: "every verb, or one verb's options and examples" };

/** Every verb with the words that lead to it (`["task", "show"]`), the root first, depth first. */
export function walkVerbs(root: VerbSpec): { path: string[]; verb: VerbSpec }[] {
  const out: { path: string[]; verb: VerbSpec }[] = [];
  const walk = (v: VerbSpec, path: string[]) => {
    out.push({ path, verb: v });
    for (const s of v.subs) walk(s, [...path, s.name]);
  };
  walk(root, []);
  return out;
}

/** A description on one line, at most `max` characters (shells show one line per candidate). */
export function shortDescription(text: string, max = 80): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 3).trimEnd()}...` : line;
}
