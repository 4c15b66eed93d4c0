// A verb's command line written once, as data: its words, arguments and options as commander's
// flags write them, and which of the global options it takes. commander's program is built from
// it (verb-command.ts), and so is the fast reading of the hot verbs' plain command lines
// (fast-line.ts), which answers them without setting commander up: the two cannot drift apart.
// Data and types only: nothing here sets up commander.
import type { Completes } from "./completes.ts";

/** An option as commander's flags write it (`--ttl <duration>`, `--next`, `-C <dir>`), and its help line. */
export interface OptionSpec {
  readonly flags: string;
  readonly description: string;
  /** Its value when the command line leaves it out. */
  readonly default?: string | readonly string[];
  /** Given again, it adds a value (context.ts collect): its value is the list of them. */
  readonly repeat?: boolean;
  /** Left out of the help (completion's `--complete`). */
  readonly hidden?: boolean;
}

/** Which global options a verb takes (context.ts withGlobals) and what a shell completes its values to (completes.ts). */
export interface GlobalsSpec {
  /** false: the verb's own --agent is something else (a filter), and it takes no global one. */
  readonly agent?: boolean;
  /** A verb that changes coordination state: it takes --push and --offline. */
  readonly writes?: boolean;
  readonly values?: Record<string, Completes>;
}

export interface VerbSpec {
  /** The words that run it: `["check"]`, `["task", "show"]`. */
  readonly words: readonly string[];
  readonly description: string;
  /** Its arguments as commander writes them (`<id>`, `[id]`, `<path...>`), each with its help line if any. */
  readonly args: readonly (readonly [string, string?])[];
  readonly options: readonly OptionSpec[];
  readonly globals: GlobalsSpec;
}

/** The options every leaf command takes (withGlobals), in the order its help lists them. */
export const GLOBAL_OPTIONS: readonly (OptionSpec & { only?: "writes" | "agent" })[] = [
  { flags: "-C <dir>", description: "run as if started in <dir>" },
  { flags: "--json", description: "print JSON" },
  { flags: "--push", description: "send this write to the sync remote at once (default: at the next sync)", only: "writes" },
  { flags: "--offline", description: "when the sync remote is unreachable, grant exclusive operations tentatively", only: "writes" },
  { flags: "--agent <name>", description: "act as this agent (default: $HANDOFF_AGENT, else user@host[.worktree])", only: "agent" },
];

/** The global options a verb of `globals` takes, in their help order. */
export function globalOptionsOf(globals: GlobalsSpec): OptionSpec[] {
  return GLOBAL_OPTIONS.filter((o) => o.only === undefined || (o.only === "writes" ? !!globals.writes : globals.agent !== false));
}
