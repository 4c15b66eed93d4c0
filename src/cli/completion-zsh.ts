// The zsh completion script: one function per verb, each an `_arguments` spec of its options (with
// their descriptions) and arguments; a group's function hands the words after its verb to the
// function of the sub-verb typed, as zsh's own completions for git do.
import type { Completes } from "./completes.ts";
import { HELP_VERB, shortDescription, walkVerbs, type OptionSpec, type VerbSpec } from "./completion-model.ts";
import { shellWord, shQuote } from "./completion-words.ts";

/** The `_arguments` action for a value; a space is no completion (zsh shows the value's name). */
function action(kind: Completes | undefined): string {
  if (kind === undefined) return " ";
  if (kind === "file") return "_files";
  if (kind === "dir") return "_files -/";
  // _arguments calls it with compadd's options (-J, -X...) after the function's name.
  if (typeof kind === "string") return `__git_handoff_${kind}s`;
  return `(${kind.map(shellWord).join(" ")})`;
}

/** Text inside an `_arguments` [explanation]: brackets and backslashes escaped. */
const explanation = (text: string) => shortDescription(text).replace(/[\\[\]]/g, "\\$&");

function optionSpecs(o: OptionSpec): string[] {
  const flags = [o.short, o.long].filter((f): f is string => !!f).map(shellWord);
  // Given once, either form leaves both out of what is offered next; a list option may be repeated.
  const prefix = o.repeatable ? "*" : flags.length > 1 ? `(${flags.join(" ")})` : "";
  const value = o.value === "none" ? "" : `${o.value === "optional" ? "::" : ":"}${o.placeholder || "value"}:${action(o.completes)}`;
  return flags.map((f) => {
    // `--ttl=`: the value after = or as the next word; `-C+`: glued to the flag or the next word.
    const form = o.value === "none" ? f : f.startsWith("--") ? `${f}=` : `${f}+`;
    return shQuote(`${prefix}${form}[${explanation(o.description)}]${value}`);
  });
}

function argumentSpecs(v: VerbSpec): string[] {
  return v.args.map((a, i) => shQuote(`${a.variadic ? "*" : i + 1}:${shellWord(a.name)}:${action(a.completes)}`));
}

/** The function completing after `path`'s verb; the root's completes the words after `git handoff`. */
const fn = (path: string[]) => (path.length ? `__git_handoff__${path.map(shellWord).join("__")}` : "__git_handoff_root");

function verbFunction(path: string[], v: VerbSpec): string {
  const specs = [...v.options.flatMap(optionSpecs), ...(v.subs.length ? [] : argumentSpecs(v))];
  if (!v.subs.length) return `${fn(path)}() {\n  _arguments -S \\\n    ${specs.join(" \\\n    ")}\n}`;
  const cases = v.subs.map((s) => `        ${[s.name, ...s.aliases].map(shellWord).join("|")}) ${fn([...path, s.name])} && ret=0 ;;`);
  if (!path.length) cases.push(`        ${HELP_VERB.name}) __git_handoff_help && ret=0 ;;`);
  return `${fn(path)}() {
  local curcontext=$curcontext state state_descr line ret=1
  typeset -A opt_args
  _arguments -C -S \\
    ${[...specs, "'1: :->verb'", "'*:: :->args'"].join(" \\\n    ")} && ret=0
  case $state in
    verb) __git_handoff_verbs ${shQuote(path.join(" "))} && ret=0 ;;
    args)
      curcontext=\${curcontext%:*:*}:git-handoff-$words[1]:
      case $words[1] in
${cases.join("\n")}
      esac ;;
  esac
  return ret
}`;
}

export function zshScript(root: VerbSpec): string {
  const all = walkVerbs(root);
  const verbLists = all
    .filter(({ verb }) => verb.subs.length)
    .map(({ path, verb }) => {
      const entries = verb.subs.flatMap((s) => [s.name, ...s.aliases].map((n) => shQuote(`${shellWord(n)}:${shortDescription(s.description)}`)));
      if (!path.length) entries.push(shQuote(`${HELP_VERB.name}:${HELP_VERB.description}`));
      return `    ${shQuote(path.join(" "))}) verbs=(\n      ${entries.join("\n      ")}\n    ) ;;`;
    });
  const groups = all.filter(({ path, verb }) => path.length && verb.subs.length).map(({ path }) => shellWord(path.join(" ")));
  return `#compdef git-handoff
# git-handoff completion for zsh: put it on your fpath as _git-handoff (before compinit runs), or
# source it after compinit. Completes verbs, options with their descriptions, and values: task ids
# and agent names (read from the repository when TAB is pressed), statuses, shells, hook names and
# the other fixed lists. zsh's git completion completes \`git handoff\` with it too.

# Task ids or agent names starting with the word under the cursor, from the repository -C names;
# the arguments after the first are compadd's, from _arguments.
__git_handoff_read() {
  local -a cmd ids
  cmd=("\${__git_handoff_cmd[@]}")
  [[ -n $__git_handoff_dir ]] && cmd+=(-C "$__git_handoff_dir")
  cmd+=(\${=1} --complete "$PREFIX")
  shift
  ids=(\${(f)"$("\${cmd[@]}" 2>/dev/null)"})
  compadd "$@" -a ids
}
__git_handoff_tasks() { __git_handoff_read 'task list' "$@"; }
__git_handoff_agents() { __git_handoff_read agents "$@"; }

# The sub-verbs of a group ('' for the verbs themselves), with their descriptions.
__git_handoff_verbs() {
  local -a verbs
  case $1 in
${verbLists.join("\n")}
  esac
  _describe -t commands "git handoff\${1:+ $1} verb" verbs
}

# \`git handoff help [verb [sub-verb]]\`
__git_handoff_help() {
  case $CURRENT in
    2) __git_handoff_verbs '' ;;
    3) case $words[2] in ${groups.join("|")}) __git_handoff_verbs $words[2] ;; esac ;;
  esac
}

${all.map(({ path, verb }) => verbFunction(path, verb)).join("\n\n")}

_git-handoff() {
  # How to run git-handoff for the ids: as typed, or through git for \`git handoff\`; -C as given.
  local -a __git_handoff_cmd
  local __git_handoff_dir i
  if [[ $words[1] == handoff ]]; then __git_handoff_cmd=(git handoff); else __git_handoff_cmd=($words[1]); fi
  for ((i = 2; i < CURRENT; i++)); do
    [[ $words[i] == -C ]] && __git_handoff_dir=\${words[i+1]/#\\~/$HOME}
  done
  ${fn([])}
}

if [[ $funcstack[1] == _git-handoff ]]; then _git-handoff "$@"; else compdef _git-handoff git-handoff; fi
`;
}
