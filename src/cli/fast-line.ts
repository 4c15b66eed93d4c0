// The hot verbs' plain command lines read without commander (hot-main.ts). Agents and the hooks
// run `task show t1`, `check src/a.ts`, `claim t1 --agent a` one process each, and commander was
// the largest single item of such a cold command's start (its code deserialised and set up, the
// program built, the parse: ~1.2-1.5 ms of a cold `task show`'s ~9 over `node -e 0`). A line is
// read here only when it is plainly one of `verbs`, from the verb's own spec (verb-spec.ts), as
// commander would read it; anything else is left to commander (undefined), so help, usage errors,
// suggestions and their statuses stay commander's. test/cli-fast-line.test.ts holds every line
// read here to commander's reading of it.
import type { Verb } from "./verb-command.ts";
import { globalOptionsOf, type OptionSpec } from "./verb-spec.ts";

/** What commander's action would get: its arguments, and the options merged with the globals. */
export interface FastLine {
  verb: Verb;
  args: unknown[];
  opts: Record<string, unknown>;
}

interface Flag {
  /** `--ttl` or `-C`. */
  name: string;
  /** commander's attributeName: `overCapacity` for `--over-capacity`, `C` for `-C`. */
  key: string;
  takesValue: boolean;
  repeat: boolean;
  default: string | readonly string[] | undefined;
}

/**
 * One flag, alone or with a required value (`--json`, `--ttl <duration>`, `-C <dir>`), which may
 * have a default and repeat (its values collected); any other form (both a short and a long flag,
 * an optional value, `--no-x`, a variadic value) is not read here: a verb with one is left to commander.
 */
function flagOf(o: OptionSpec): Flag | undefined {
  const m = /^(--[a-z][a-z0-9]*(?:-[a-z0-9]+)*|-[A-Za-z])(?: <[\w-]+>)?$/.exec(o.flags);
  if (!m || m[1]!.startsWith("--no-")) return undefined;
  const name = m[1]!;
  const key = name.replace(/^--?/, "").replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  const takesValue = o.flags.length > name.length;
  // A switch that repeats or has a default is no form commander reads as this does.
  if (!takesValue && (o.repeat || o.default !== undefined)) return undefined;
  return { name, key, takesValue, repeat: !!o.repeat, default: o.default };
}

/** An argument as commander writes it: `<id>` (required), `[id]` (optional), `<path...>` (the rest). */
function argumentOf(text: string): { required: boolean; variadic: boolean } | undefined {
  const m = /^([<[])[\w-]+(\.\.\.)?[>\]]$/.exec(text);
  return m ? { required: m[1] === "<", variadic: !!m[2] } : undefined;
}

/**
 * The verb and what commander would hand its action, for a command line that starts with one of
 * `verbs`' words and has nothing but that verb's arguments and options, each in its plain form:
 * `--opt value` or `--opt=value` for a value, the flag alone for a switch. Left to commander: a
 * word before the verb, `--`, `-h`/`--help`, any option the verb lacks, a short option with its
 * value joined (`-Cdir`), a switch given `=`, a value that starts with '-' (commander takes it
 * as the value; program-builder.ts refuses one that is an option), too few or too many arguments.
 */
export function fastLine(verbs: readonly Verb[], argv: readonly string[]): FastLine | undefined {
  const verb = verbs.find(({ spec }) => spec.words.every((w, i) => argv[i] === w));
  if (!verb) return undefined;
  const flags: Flag[] = [];
  for (const o of [...verb.spec.options, ...globalOptionsOf(verb.spec.globals)]) {
    const flag = flagOf(o);
    if (!flag) return undefined;
    flags.push(flag);
  }
  // What commander's options hold before the command line is read: their defaults.
  const opts: Record<string, unknown> = {};
  for (const f of flags) if (f.default !== undefined) opts[f.key] = typeof f.default === "string" ? f.default : [...f.default];
  const operands: string[] = [];
  for (let i = verb.spec.words.length; i < argv.length; i++) {
    const word = argv[i]!;
    if (!word.startsWith("-")) {
      operands.push(word);
      continue;
    }
    const eq = word.startsWith("--") ? word.indexOf("=") : -1;
    const flag = flags.find((f) => f.name === (eq > 2 ? word.slice(0, eq) : word));
    if (!flag) return undefined;
    if (!flag.takesValue) {
      if (eq > 2) return undefined;
      opts[flag.key] = true;
      continue;
    }
    const value = eq > 2 ? word.slice(eq + 1) : argv[++i];
    if (value === undefined || value.startsWith("-")) return undefined;
    opts[flag.key] = flag.repeat ? [...((opts[flag.key] as string[] | undefined) ?? []), value] : value;
  }
  const args: unknown[] = [];
  let at = 0;
  for (const [text] of verb.spec.args) {
    const arg = argumentOf(text);
    if (!arg) return undefined;
    if (arg.variadic) {
      if (arg.required && at === operands.length) return undefined;
      args.push(operands.slice(at));
      at = operands.length;
    } else if (at < operands.length) args.push(operands[at++]);
    else if (arg.required) return undefined;
    else args.push(undefined);
  }
  return at === operands.length ? { verb, args, opts } : undefined;
}
