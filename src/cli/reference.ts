// The CLI reference, the man page and the shell completions, all generated from the commander
// definitions themselves, so none of them can drift from what the program accepts.
// `npm run docs` writes docs/cli.md and man/git-handoff.1; a test fails when they are stale.
import type { Command, Option } from "commander";
import { EXAMPLES } from "./examples.ts";

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
    usage: `git handoff ${path.join(" ")} ${sub.usage()}`.trim(),
    description: sub.description(),
    options: sub.options.filter((o: Option) => !o.hidden).map((o: Option) => ({ flags: o.flags, description: o.description })),
    examples: (EXAMPLES[path.join(" ")] ?? []).join("\n"),
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
    "0 success; 2 invalid input or usage; 3 refused (held by another agent, blocked, at capacity, lost race, quarantined, the remote refused or did not answer); 4 not found; 5 the machine refused (disk full, read-only, permissions); 6, 7, 8, 130 from wait (failed, cancelled, timed out, interrupted); 1 an unexpected error (a bug).",
    ".SH SEE ALSO",
    "\\fBgit\\fR(1), the docs folder of the git\\-handoff package.",
    "",
  );
  return out.join("\n");
}

/** Shell completion scripts. bash: git's own completion calls `_git_handoff` for `git handoff`. */
export function completion(program: Command, shell: string): string {
  const vs = verbs(program);
  const top = [...new Set(vs.map((v) => v.path.split(" ")[0]!))];
  const subs = new Map<string, string[]>();
  for (const v of vs) {
    const [head, sub] = v.path.split(" ");
    if (sub) subs.set(head!, [...(subs.get(head!) ?? []), sub]);
  }
  const optsOf = (path: string) => vs.find((v) => v.path === path)?.options.flatMap((o) => o.flags.split(/[ ,|]+/).filter((f) => f.startsWith("-"))) ?? [];
  if (shell === "bash") {
    const cases = vs.map((v) => `    "${v.path}") opts="${optsOf(v.path).join(" ")}" ;;`).join("\n");
    const groups = [...subs].map(([g, s]) => `    ${g}) [ "$cword_rel" -eq 1 ] && { COMPREPLY=($(compgen -W "${s.join(" ")}" -- "$cur")); return; } ;;`).join("\n");
    return `# git-handoff completion for bash: source it, or put it in your bash-completion folder.
# Completes both \`git-handoff <TAB>\` and \`git handoff <TAB>\` (git's completion calls _git_handoff).
__git_handoff_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" start="$1" words=() i
  for ((i = start; i < COMP_CWORD; i++)); do [[ \${COMP_WORDS[i]} != -* ]] && words+=("\${COMP_WORDS[i]}"); done
  local cword_rel=\${#words[@]}
  if [ "$cword_rel" -eq 0 ]; then COMPREPLY=($(compgen -W "${top.join(" ")} help version completion" -- "$cur")); return; fi
  case "\${words[0]}" in
${groups}
  esac
  local opts=""
  case "\${words[0]}\${words[1]:+ \${words[1]}}" in
${cases}
  esac
  [ -z "$opts" ] && case "\${words[0]}" in
${vs.filter((v) => !v.path.includes(" ")).map((v) => `    ${v.path}) opts="${optsOf(v.path).join(" ")}" ;;`).join("\n")}
  esac
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
_git_handoff() { __git_handoff_complete 2; }
_git_handoff_cmd() { __git_handoff_complete 1; }
complete -o default -F _git_handoff_cmd git-handoff
`;
  }
  if (shell === "zsh") {
    return `#compdef git-handoff
# git-handoff completion for zsh: put it on your fpath as _git-handoff (git's zsh completion then
# also completes \`git handoff\` through the user command).
_git-handoff() {
  local -a verbs
  verbs=(${top.map((t) => `'${t}:${(vs.find((v) => v.path.split(" ")[0] === t)?.description ?? "").replace(/'/g, "").replace(/:/g, " ").slice(0, 70)}'`).join(" ")})
  if (( CURRENT == 2 )); then _describe 'git handoff verb' verbs; return; fi
  case $words[2] in
${[...subs].map(([g, s]) => `    ${g}) (( CURRENT == 3 )) && { compadd ${s.join(" ")}; return } ;;`).join("\n")}
  esac
  _files
}
compdef _git-handoff git-handoff
`;
  }
  if (shell === "fish") {
    const lines = [`# git-handoff completion for fish: put it in ~/.config/fish/completions/git-handoff.fish`];
    for (const t of top) lines.push(`complete -c git-handoff -n '__fish_use_subcommand' -a ${t} -d '${(vs.find((v) => v.path.split(" ")[0] === t)?.description ?? "").replace(/'/g, "").slice(0, 70)}'`);
    for (const [g, s] of subs) for (const x of s) lines.push(`complete -c git-handoff -n '__fish_seen_subcommand_from ${g}' -a ${x}`);
    for (const v of vs) {
      const head = v.path.split(" ")[0]!;
      for (const o of v.options) {
        const long = /--([a-z][a-z0-9-]*)/.exec(o.flags)?.[1];
        if (long) lines.push(`complete -c git-handoff -n '__fish_seen_subcommand_from ${head}' -l ${long} -d '${o.description.replace(/'/g, "").slice(0, 60)}'`);
      }
    }
    return lines.join("\n") + "\n";
  }
  throw new Error(`unknown shell ${shell}`);
}
