// The bash completion script: a walk over the words typed so far finds the verb, the option
// waiting for a value and the position of the argument under the cursor; generated `case` tables
// (from completion-model.ts) say what each of those completes to.
import type { Completes } from "./completes.ts";
import { HELP_VERB, walkVerbs, type OptionSpec, type VerbSpec } from "./completion-model.ts";
import { shellWord } from "./completion-words.ts";

/** The action for a value: the ids read from the repository, names on disk, a fixed list, or nothing. */
function action(kind: Completes | undefined): string {
  if (kind === undefined) return "__git_handoff_none"; // free text, a number, a duration
  if (kind === "file") return ":"; // bash's own file names (complete -o default)
  if (kind === "dir") return "__git_handoff_dirs";
  if (typeof kind === "string") return `__git_handoff_read ${kind}`;
  return `__git_handoff_words "${kind.map(shellWord).join(" ")}"`;
}

/** `case` arms grouped by their action, in first-seen order: one line per action. */
function arms(entries: [string, string][]): string {
  const byAction = new Map<string, string[]>();
  const pattern = (key: string) => (key.startsWith("*") ? `*"${key.slice(1)}"` : `"${key}"`);
  for (const [key, act] of entries) byAction.set(act, [...(byAction.get(act) ?? []), pattern(key)]);
  return [...byAction].map(([act, keys]) => `    ${keys.join("|")}) ${act} ;;`).join("\n");
}

export function bashScript(root: VerbSpec): string {
  const at = (path: string[]) => path.join(" ");
  const flagsOf = (o: OptionSpec) => [o.long, o.short].filter((f): f is string => !!f).map(shellWord);
  // The options before the verb are repeated after every verb (context.ts withGlobals): one
  // pattern for each of them, unless a verb's own option of that name takes something else.
  const globalValue = new Map(root.options.filter((o) => o.value !== "none").flatMap((o) => flagsOf(o).map((f) => [f, action(o.completes)] as const)));
  const steps: string[] = [];
  const takesValue: string[] = [];
  const values: [string, string][] = [];
  const lastVariadic: [string, number][] = [];
  const options: string[] = [];
  const subs: string[] = [];
  for (const { path, verb } of walkVerbs(root)) {
    for (const s of verb.subs) {
      for (const name of [s.name, ...s.aliases]) steps.push(`      "${at(path)}/${shellWord(name)}") path="${at([...path, s.name])}"; continue ;;`);
    }
    for (const o of verb.options.filter((o) => o.value !== "none")) {
      for (const f of flagsOf(o)) {
        if (globalValue.get(f) === action(o.completes)) continue;
        takesValue.push(`"${at(path)}|${f}"`);
        values.push([`${at(path)}|${f}`, action(o.completes)]);
      }
    }
    verb.args.forEach((a, i) => values.push([`${at(path)}#${i}`, action(a.completes)]));
    const last = verb.args.length - 1;
    if (last >= 0 && verb.args[last]!.variadic) lastVariadic.push([at(path), last]);
    options.push(`    "${at(path)}") echo "${verb.options.flatMap(flagsOf).join(" ")}" ;;`);
    if (verb.subs.length) subs.push(`    "${at(path)}") echo "${verb.subs.flatMap((s) => [s.name, ...s.aliases]).map(shellWord).join(" ")}" ;;`);
  }
  // After the verbs' own: a pattern for every verb must not hide one verb's other meaning.
  const globalArms = [...globalValue].map(([f, act]): [string, string] => [`*|${f}`, act]);
  takesValue.push(...globalArms.map(([key]) => `*"${key.slice(1)}"`));
  return `# git-handoff completion for bash: source it, or put it in your bash-completion folder as
# git-handoff. Completes \`git-handoff <TAB>\` and, through git's own completion (which calls
# _git_handoff), \`git handoff <TAB>\`: verbs, options, and values: task ids and agent names (read
# from the repository when TAB is pressed), statuses, shells, hook names and the other fixed lists.

# Task ids or agent names starting with the word under the cursor, from the repository -C names.
__git_handoff_read() {
  local -a cmd=("\${__git_handoff_cmd[@]}")
  [ -n "$__git_handoff_dir" ] && cmd+=(-C "$__git_handoff_dir")
  case $1 in task) cmd+=(task list) ;; agent) cmd+=(agents) ;; esac
  local IFS=$'\\n'
  COMPREPLY=($("\${cmd[@]}" --complete "$cur" 2>/dev/null))
  compopt +o default +o bashdefault 2>/dev/null
}
__git_handoff_dirs() {
  local IFS=$'\n'
  COMPREPLY=($(compgen -d -- "$cur"))
  compopt -o filenames +o default +o bashdefault 2>/dev/null
}
__git_handoff_words() {
  COMPREPLY=($(compgen -W "$1" -- "$cur"))
  compopt +o default +o bashdefault 2>/dev/null
}
# Nothing to offer (free text, or no argument here): not file names either.
__git_handoff_none() {
  COMPREPLY=()
  compopt +o default +o bashdefault 2>/dev/null
}
__git_handoff_options() {
  case $1 in
${options.join("\n")}
  esac
}
__git_handoff_subs() {
  case $1 in
${subs.join("\n")}
  esac
}
# $1: the index of the first word after the command; reads __git_handoff_line and __git_handoff_at.
__git_handoff_complete() {
  local cur=\${__git_handoff_line[__git_handoff_at]} path= npos=0 want= help= w i
  local __git_handoff_dir=
  COMPREPLY=()
  for ((i = $1; i < __git_handoff_at; i++)); do
    w=\${__git_handoff_line[i]}
    if [ -n "$want" ]; then
      [ "$want" = -C ] && __git_handoff_dir=\${w/#\\~/$HOME}
      want=
      continue
    fi
    case $w in
      --*=*) continue ;;
      -*)
        case "$path|$w" in
          ${takesValue.join("|")}) want=$w ;;
        esac
        continue ;;
    esac
    if [ "$npos" -eq 0 ]; then
      case "$path/$w" in
${steps.join("\n")}
      esac
      if [ -z "$path" ] && [ -z "$help" ] && [ "$w" = help ]; then help=1; continue; fi
    fi
    npos=$((npos + 1))
  done
  if [ -n "$want" ]; then
    case "$path|$want" in
${arms(values.filter(([k]) => k.includes("|")))}
${arms(globalArms)}
    esac
    return
  fi
  if [ -n "$help" ]; then
    if [ "$npos" -eq 0 ]; then __git_handoff_words "$(__git_handoff_subs "$path")"; else __git_handoff_none; fi
    return
  fi
  case $cur in
    --*=*) return ;;
    -*) __git_handoff_words "$(__git_handoff_options "$path")"; return ;;
  esac
  if [ "$npos" -eq 0 ] && [ -n "$(__git_handoff_subs "$path")" ]; then
    __git_handoff_words "$(__git_handoff_subs "$path")"
    [ -z "$path" ] && COMPREPLY+=($(compgen -W ${HELP_VERB.name} -- "$cur"))
    return
  fi
  case $path in
${lastVariadic.map(([p, i]) => `    "${p}") [ "$npos" -gt ${i} ] && npos=${i} ;;`).join("\n")}
  esac
  case "$path#$npos" in
${arms(values.filter(([k]) => k.includes("#")))}
    *) __git_handoff_none ;;
  esac
}
# git's completion calls this for \`git handoff\`; it leaves the space after a word to its callee.
_git_handoff() {
  local -a __git_handoff_cmd=(git "\${__git_C_args[@]}" handoff) __git_handoff_line
  local __git_handoff_at i start=1
  if [ -n "\${cword-}" ] && [ "\${#words[@]}" -gt 0 ]; then
    __git_handoff_line=("\${words[@]}") __git_handoff_at=$cword
  else
    __git_handoff_line=("\${COMP_WORDS[@]}") __git_handoff_at=$COMP_CWORD
  fi
  for ((i = 1; i < __git_handoff_at; i++)); do
    [ "\${__git_handoff_line[i]}" = handoff ] && { start=$((i + 1)); break; }
  done
  compopt +o nospace 2>/dev/null
  __git_handoff_complete "$start"
}
_git_handoff_cmd() {
  local -a __git_handoff_cmd=("\${COMP_WORDS[0]}") __git_handoff_line=("\${COMP_WORDS[@]}")
  local __git_handoff_at=$COMP_CWORD
  __git_handoff_complete 1
}
complete -o default -F _git_handoff_cmd git-handoff
`;
}
