// The fish completion script: `complete` lines for every verb, option and argument, each under a
// condition on where the command line stands (the verb typed, the argument's position), which one
// walk of the words works out (__git_handoff_state) as the bash script's does.
import type { Completes } from "./completes.ts";
import { HELP_VERB, shortDescription, walkVerbs, type OptionSpec, type VerbSpec } from "./completion-model.ts";
import { fishQuote, shellWord } from "./completion-words.ts";

/** The `complete` flags for a value: what it offers, and whether file names are offered too. */
function valueFlags(kind: Completes | undefined): string {
  if (kind === undefined) return "-x"; // a value, nothing to offer
  if (kind === "file") return "-r -F";
  if (kind === "dir") return "-x -a '(__fish_complete_directories (__git_handoff_token))'";
  if (typeof kind === "string") return `-x -a '(__git_handoff_read ${kind})'`;
  return `-x -a ${fishQuote(kind.map(shellWord).join(" "))}`;
}

function optionLine(path: string, o: OptionSpec): string {
  const flags = [o.short ? `-s ${shellWord(o.short.slice(1))}` : "", o.long ? `-l ${shellWord(o.long.slice(2))}` : ""].filter(Boolean).join(" ");
  // An optional value (`done --verify [cmd]`) is not asked for: the flag alone is complete.
  const value = o.value === "required" ? ` ${valueFlags(o.completes)}` : "";
  return `complete -c git-handoff -n ${fishQuote(`__git_handoff_options_at "${path}"`)} ${flags}${value} -d ${fishQuote(shortDescription(o.description))}`;
}

function argumentLines(path: string, v: VerbSpec): string[] {
  return v.args.flatMap((a, i) => {
    if (a.completes === undefined) return [];
    const at = a.variadic ? `${i}+` : `${i}`;
    const value = valueFlags(a.completes).replace(/^-[rx] ?/, "");
    return [`complete -c git-handoff -n ${fishQuote(`__git_handoff_argument_at "${path}" ${at}`)} ${value}`];
  });
}

export function fishScript(root: VerbSpec): string {
  const all = walkVerbs(root);
  const key = (path: string[]) => path.join(" ");
  const steps: string[] = [];
  const takesValue: string[] = [];
  const lines: string[] = [];
  for (const { path, verb } of all) {
    const at = key(path);
    for (const s of verb.subs) {
      for (const name of [s.name, ...s.aliases]) {
        steps.push(`        case '${at}/${shellWord(name)}'\n            echo '${key([...path, s.name])}'`);
        lines.push(`complete -c git-handoff -n ${fishQuote(`__git_handoff_verbs_at "${at}"`)} -a ${shellWord(name)} -d ${fishQuote(shortDescription(s.description))}`);
      }
    }
    if (!path.length) lines.push(`complete -c git-handoff -n ${fishQuote('__git_handoff_verbs_at ""')} -a ${HELP_VERB.name} -d ${fishQuote(HELP_VERB.description)}`);
    for (const o of verb.options) {
      lines.push(optionLine(at, o));
      if (o.value !== "none") for (const f of [o.long, o.short]) if (f) takesValue.push(`'${at}|${shellWord(f)}'`);
    }
    lines.push(...argumentLines(at, verb));
  }
  return `# git-handoff completion for fish: save it as ~/.config/fish/completions/git-handoff.fish.
# Completes verbs, options with their descriptions, and values: task ids and agent names (read from
# the repository when TAB is pressed), statuses, shells, hook names and the other fixed lists.
# fish's git completion, where it hands git-* commands their own completions, uses it for \`git handoff\`.

# Where the command line stands, worked out once per command line: the verb's path ('task show'),
# the count of its arguments typed, the option waiting for a value, whether it follows \`help\`,
# the folder -C names and how git-handoff was run.
function __git_handoff_state
    set -l line (commandline -opc)
    test "$line" = "$__git_handoff_line"; and return
    set -g __git_handoff_line $line
    set -g __git_handoff_cmd $line[1]
    test "$line[1]" = git; and set -g __git_handoff_cmd git handoff
    set -g __git_handoff_path ''
    set -g __git_handoff_npos 0
    set -g __git_handoff_want ''
    set -g __git_handoff_help 0
    set -g __git_handoff_dir ''
    set -l seen 0
    for w in $line[2..-1]
        if test "$line[1]" = git -a $seen = 0
            test "$w" = handoff; and set seen 1
            continue
        end
        if test -n "$__git_handoff_want"
            test "$__git_handoff_want" = -C; and set -g __git_handoff_dir (string replace -r '^~' $HOME -- $w)
            set -g __git_handoff_want ''
            continue
        end
        switch $w
            case '--*=*'
                continue
            case '-*'
                __git_handoff_takes_value "$__git_handoff_path" $w; and set -g __git_handoff_want $w
                continue
        end
        if test $__git_handoff_npos = 0
            set -l next (__git_handoff_step "$__git_handoff_path" $w)
            if test -n "$next"
                set -g __git_handoff_path $next
                continue
            end
            if test -z "$__git_handoff_path" -a $__git_handoff_help = 0 -a "$w" = help
                set -g __git_handoff_help 1
                continue
            end
        end
        set -g __git_handoff_npos (math $__git_handoff_npos + 1)
    end
end

function __git_handoff_step -a path word
    switch "$path/$word"
${steps.join("\n")}
    end
end

function __git_handoff_takes_value -a path flag
    switch "$path|$flag"
        case ${takesValue.join(" ")}
            return 0
    end
    return 1
end

# The verbs that may follow: after \`git handoff\`, a group, or \`help\`.
function __git_handoff_verbs_at -a path
    __git_handoff_state
    test "$__git_handoff_path" = "$path" -a $__git_handoff_npos = 0 -a -z "$__git_handoff_want"
end

function __git_handoff_options_at -a path
    __git_handoff_state
    test "$__git_handoff_path" = "$path" -a $__git_handoff_help = 0
end

# The argument at \`index\` (from 0; \`2+\`: that one or any after it) of the verb at \`path\`.
function __git_handoff_argument_at -a path index
    __git_handoff_state
    test "$__git_handoff_path" = "$path" -a $__git_handoff_help = 0 -a -z "$__git_handoff_want"; or return
    set -l n (string replace '+' '' -- $index)
    test $__git_handoff_npos = $n; and return 0
    string match -q '*+' -- $index; and test $__git_handoff_npos -ge $n
end

# The word being completed, without an option's name glued to it (--after=ap).
function __git_handoff_token
    string replace -r -- '^--[^=]*=' '' (commandline -ct)
end

# Task ids or agent names starting with the word being completed, from the repository -C names.
function __git_handoff_read -a what
    __git_handoff_state
    set -l cmd $__git_handoff_cmd
    test -n "$__git_handoff_dir"; and set -a cmd -C $__git_handoff_dir
    switch $what
        case task
            set -a cmd task list
        case agent
            set -a cmd agents
    end
    $cmd --complete (__git_handoff_token) 2>/dev/null
end

complete -c git-handoff -f
${lines.join("\n")}
`;
}
