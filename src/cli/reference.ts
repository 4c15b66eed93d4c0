// The CLI reference and the man page, generated from the commander definitions themselves, so
// neither can drift from what the program accepts (the shell completions are too: completion.ts).
// `npm run docs` writes docs/cli.md and man/git-handoff.1; a test fails when they are stale.
import type { Command, Option } from "commander";
import { examplesOf } from "./examples.ts";

export interface VerbDoc {
  /** The words after `git handoff`, like `task add`. */
  path: string;
  usage: string;
  description: string;
  options: { flags: string; description: string }[];
  examples: string;
}

/** Whether a command does something of its own (a group may: `review` lists the queue), not only hold subcommands. */
export function runsItself(c: Command): boolean {
  return !c.commands.length || typeof (c as Command & { _actionHandler?: unknown })._actionHandler === "function";
}

/** Every command that runs (leaves, and groups with an action of their own), in the order the program lists them. */
export function verbs(program: Command): VerbDoc[] {
  const out: VerbDoc[] = [];
  const walk = (c: Command, prefix: string[]) => {
    for (const sub of c.commands) {
      if ((sub as Command & { _hidden?: boolean })._hidden) continue;
      const path = [...prefix, sub.name()];
      if (runsItself(sub)) out.push(doc(sub, path));
      walk(sub, path);
    }
  };
  walk(program, []);
  return out;
}

function doc(sub: Command, path: string[]): VerbDoc {
  return {
    path: path.join(" "),
    // An alias is spelled as `help` spells it: `conflicts|merge-preview`.
    usage: `git handoff ${[...path.slice(0, -1), [sub.name(), ...sub.aliases()].join("|")].join(" ")} ${sub.usage()}`.trim(),
    description: sub.description(),
    options: sub.options.filter((o: Option) => !o.hidden).map((o: Option) => ({ flags: o.flags, description: o.description })),
    examples: (examplesOf(path.join(" ")) ?? []).join("\n"),
  };
}

export function cliMarkdown(program: Command): string {
  const vs = verbs(program);
  const lines = [
    "# CLI reference",
    "",
    "Generated from the command definitions by `npm run docs`; do not edit by hand. Every command",
    "also answers `git handoff help <verb>`. Options before the verb (`-C`, `--agent`, `--json`) apply",
    "to the whole call.",
    "",
    ...vs.map((v) => `- [\`git handoff ${v.path}\`](#${anchor(v.path)}): ${v.description}`),
    "",
  ];
  for (const v of vs) {
    lines.push(`## git handoff ${v.path}`, "", v.description, "", "```", v.usage, "```", "");
    if (v.options.length) {
      lines.push("| option | meaning |", "| --- | --- |");
      for (const o of v.options) lines.push(`| \`${o.flags}\` | ${o.description.replace(/\|/g, "\\|")} |`);
      lines.push("");
    }
    if (v.examples) lines.push("Examples:", "", "```sh", v.examples, "```", "");
  }
  return lines.join("\n");
}

function anchor(path: string): string {
  return `git-handoff-${path.replace(/ /g, "-")}`;
}

const roff = (s: string) => s.replace(/\\/g, "\\e").replace(/^([.'])/gm, "\\&$1").replace(/-/g, "\\-");
/** Filled text: a list of values joined by `|` has no space to break at, so each `|` is also a
 * break point (`\:`, zero width), or troff cannot fit the line and warns on the reader's terminal. */
const roffText = (s: string) => roff(s).replace(/\|/g, "|\\:");

export function manPage(program: Command, version: string): string {
  const vs = verbs(program);
  const out = [
    `.TH GIT\\-HANDOFF 1 "" "git-handoff ${version}" "Git Manual"`,
    ".SH NAME",
    "git\\-handoff \\- coordinate parallel coding agents through git refs",
    ".SH SYNOPSIS",
    ".B git handoff",
    "[\\fB\\-C\\fR \\fIdir\\fR] [\\fB\\-\\-agent\\fR \\fIname\\fR] [\\fB\\-\\-json\\fR] \\fIverb\\fR [\\fIoptions\\fR]",
    ".SH DESCRIPTION",
    roff("Task claims with leases and fencing, file leases, dependencies, handoffs, the review queue, agents and the event history, stored as commits under refs/handoff/ and shared by every worktree and, through any git remote, every clone."),
    ".SH COMMANDS",
  ];
  for (const v of vs) {
    out.push(".TP", `.B ${roff(v.usage)}`, roffText(v.description));
    for (const o of v.options) out.push(".RS", ".TP", `.B ${roff(o.flags)}`, roffText(o.description), ".RE");
    if (v.examples) out.push(".RS", ".PP", "Examples:", ".nf", roff(v.examples), ".fi", ".RE");
  }
  out.push(
    ".SH EXIT STATUS",
    "0 success; 2 invalid input or usage; 3 refused (held by another agent, blocked, at capacity, lost race, quarantined, a record from a newer git-handoff, the remote refused or did not answer); 4 not found; 5 the machine refused (disk full, read-only, permissions); 6, 7, 8, 130 from wait (failed, cancelled, timed out, interrupted); 1 an unexpected error (a bug).",
    ".SH SEE ALSO",
    "\\fBgit\\fR(1), the docs folder of the git\\-handoff package.",
    "",
  );
  return out.join("\n");
}
