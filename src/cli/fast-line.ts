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
  // Read by hand, not by a pattern: a cold line reads each flag of its verb once, and V8 compiled
  // each pattern at its first use and again (native code) at its second (~0.2 ms of a cold `task show`).
  const space = o.flags.indexOf(" ");
  const name = space < 0 ? o.flags : o.flags.slice(0, space);
  if (!(longFlag(name) || (name.length === 2 && name[0] === "-" && isLetter(name.charCodeAt(1)))) || name.startsWith("--no-")) return undefined;
  if (space >= 0 && !valueName(o.flags.slice(space + 1))) return undefined;
  // commander's attributeName: `--over-capacity` -> `overCapacity`, `-C` -> `C`.
  const key = name.slice(name[1] === "-" ? 2 : 1).split("-").map((part, i) => (i ? part[0]!.toUpperCase() + part.slice(1) : part)).join("");
  const takesValue = space >= 0;
  // A switch that repeats or has a default is no form commander reads as this does.
  if (!takesValue && (o.repeat || o.default !== undefined)) return undefined;
  return { name, key, takesValue, repeat: !!o.repeat, default: o.default };
}

const isLetter = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
const isLowerOrDigit = (c: number) => (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
const isWord = (c: number) => isLetter(c) || (c >= 48 && c <= 57) || c === 95 || c === 45; // [\w-]

/** `--` and words of lower-case letters and digits joined by single '-', the first starting with a letter. */
function longFlag(name: string): boolean {
  if (!name.startsWith("--") || !(name.charCodeAt(2) >= 97 && name.charCodeAt(2) <= 122)) return false;
  for (let i = 3; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c === 45 ? !isLowerOrDigit(name.charCodeAt(i + 1)) : !isLowerOrDigit(c)) return false;
  }
  return true;
}

/** One or more of `[\w-]` from `from` to `to` (exclusive). */
function wordIn(text: string, from: number, to: number): boolean {
  if (to <= from) return false;
  for (let i = from; i < to; i++) if (!isWord(text.charCodeAt(i))) return false;
  return true;
}

/** A flag's value as commander writes it: `<duration>`. */
const valueName = (text: string) => text[0] === "<" && text[text.length - 1] === ">" && wordIn(text, 1, text.length - 1);

/** An argument as commander writes it: `<id>` (required), `[id]` (optional), `<path...>` (the rest). */
function argumentOf(text: string): { required: boolean; variadic: boolean } | undefined {
  const last = text.length - 1;
  if ((text[0] !== "<" && text[0] !== "[") || (text[last] !== ">" && text[last] !== "]")) return undefined;
  const variadic = text.endsWith("...", last) && wordIn(text, 1, last - 3);
  return variadic || wordIn(text, 1, last) ? { required: text[0] === "<", variadic } : undefined;
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
