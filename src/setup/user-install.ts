// `git handoff init --user` / `uninstall --user`: agent hooks in the user's own settings, for
// agents started in a subfolder of a repository. Claude Code and Gemini CLI read project settings
// only from the folder they start in, so there the project's hooks never run. The user-scope hook
// runs for every folder on the machine, so it is a small sh script: outside a repository holding
// refs/handoff/ it exits at once and starts no Node process; where the project's own hook runs
// (the agent started in the folder holding it) it leaves the work to that one.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { addGroup, pretty, readJson, stripOurs, type Action } from "./hook-install.ts";

export const USER_HOOK_SCRIPT = `#!/bin/sh
# git-handoff user-scope agent hook: installed by \`git handoff init --user\`, removed by
# \`git handoff uninstall --user\`. Runs \`git-handoff hook <name>\` only in a repository that
# uses git-handoff, and only where the project's own hook does not run.
name="$1"
case "$name" in
  claude-*) dir="\${CLAUDE_PROJECT_DIR:-$PWD}"; project=".claude/settings.json" ;;
  gemini-*) dir="\${GEMINI_PROJECT_DIR:-$PWD}"; project=".gemini/settings.json" ;;
  *) exit 0 ;;
esac
[ -f "$dir/$project" ] && grep -qsE "git-handoff[- ]hook $name" "$dir/$project" && exit 0
# The repository above the folder, as git finds it, without starting git in the common cases: a
# .git folder with a HEAD (its own common dir), or none up to / (no repository). Anything else (a
# .git file, a bare repository, GIT_* variables) asks git.
common=
if [ -z "\${GIT_DIR-}\${GIT_COMMON_DIR-}\${GIT_WORK_TREE-}\${GIT_CEILING_DIRECTORIES-}" ]; then
  here=$PWD
  cd -P -- "$dir" 2>/dev/null || exit 0
  d=$PWD
  cd -- "$here" 2>/dev/null
  while :; do
    if [ -d "$d/.git" ]; then { [ -f "$d/.git/HEAD" ] && [ ! -f "$d/.git/commondir" ]; } && common=$d/.git; break; fi
    [ -e "$d/.git" ] && break
    [ -f "$d/HEAD" ] && [ -d "$d/refs" ] && break
    [ "$d" = / ] && exit 0
    d=\${d%/*}
    [ -n "$d" ] || d=/
  done
fi
[ -n "$common" ] || common=$(git -C "$dir" rev-parse --path-format=absolute --git-common-dir 2>/dev/null) || exit 0
[ -d "$common/refs/handoff" ] || [ -f "$common/handoff-store.git/HEAD" ] || [ -d "$common/reftable" ] || { [ -f "$common/packed-refs" ] && grep -qs " refs/handoff/" "$common/packed-refs"; } || exit 0
case "$name" in *-pre-tool-use | *-before-tool | *-after-tool) command -v git-handoff-hook >/dev/null 2>&1 && exec git-handoff-hook "$name" ;; esac
command -v git-handoff >/dev/null 2>&1 || { echo "git-handoff: not on PATH, file leases not checked" >&2; exit 0; }
exec git-handoff hook "$name"
`;

/** Our user-scope entries run this script; that is how uninstall --user finds them. */
const USER_MARK = /git-handoff\/agent-hook'? /;

export interface UserLayout {
  home: string;
  /** Where the script lives: $XDG_CONFIG_HOME/git-handoff (default ~/.config/git-handoff). */
  scriptDir: string;
}

export function userLayout(env: NodeJS.ProcessEnv = process.env): UserLayout {
  const home = homedir();
  return { home, scriptDir: join(env.XDG_CONFIG_HOME || join(home, ".config"), "git-handoff") };
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

interface UserAgent {
  file: string;
  name: string;
  add(json: Record<string, any>, run: (hook: string) => string): boolean;
}

const USER_AGENTS: UserAgent[] = [
  {
    file: ".claude/settings.json",
    name: "Claude Code",
    add(json, run) {
      const a = addGroup(json, "PreToolUse", { matcher: "Edit|Write|MultiEdit|NotebookEdit|Bash", hooks: [{ type: "command", command: run("claude-pre-tool-use"), timeout: 10 }] }, run("claude-pre-tool-use"));
      const b = addGroup(json, "SessionStart", { hooks: [{ type: "command", command: run("claude-session-start"), timeout: 10 }] }, run("claude-session-start"));
      return a || b;
    },
  },
  {
    file: ".gemini/settings.json",
    name: "Gemini CLI",
    add(json, run) {
      const tools = "write_file|replace|run_shell_command";
      const a = addGroup(json, "BeforeTool", { matcher: tools, hooks: [{ name: "git-handoff-user", type: "command", command: run("gemini-before-tool"), timeout: 10000 }] }, run("gemini-before-tool"));
      const b = addGroup(json, "AfterTool", { matcher: tools, hooks: [{ name: "git-handoff-user-context", type: "command", command: run("gemini-after-tool"), timeout: 10000 }] }, run("gemini-after-tool"));
      const c = addGroup(json, "SessionStart", { hooks: [{ name: "git-handoff-user-session", type: "command", command: run("gemini-session-start"), timeout: 10000 }] }, run("gemini-session-start"));
      return a || b || c;
    },
  },
];

export function planUserInstall(layout: UserLayout): Action[] {
  const script = join(layout.scriptDir, "agent-hook");
  const run = (hook: string) => `${quote(script)} ${hook}`;
  const actions: Action[] = [];
  const same = existsSync(script) && readFileSync(script, "utf8") === USER_HOOK_SCRIPT;
  if (!same) actions.push({ op: existsSync(script) ? "update" : "create", path: script, content: USER_HOOK_SCRIPT, mode: 0o755, detail: `user-scope agent hook script ${script} (exits at once outside repositories using git-handoff)` });
  for (const a of USER_AGENTS) {
    const path = join(layout.home, a.file);
    const { json, error, exists } = readJson(path);
    if (error) {
      actions.push({ op: "note", path, detail: `${a.name}: ${path} is not valid JSON (${error}); left untouched. Fix it and run init --user again` });
      continue;
    }
    const next = structuredClone(json ?? {});
    if (!a.add(next, run)) continue;
    if (exists && !existsSync(path + ".handoff-backup")) actions.push({ op: "backup", path, to: path + ".handoff-backup", detail: `back up ${path}` });
    actions.push({ op: exists ? "update" : "create", path, content: pretty(next), detail: `${a.name}: user-scope git-handoff hooks in ${path} (for starts in subfolders)` });
  }
  return actions;
}

export function planUserUninstall(layout: UserLayout): Action[] {
  const actions: Action[] = [];
  for (const a of USER_AGENTS) {
    const path = join(layout.home, a.file);
    const { json, error } = readJson(path);
    if (error) {
      actions.push({ op: "note", path, detail: `${path} is not valid JSON (${error}); left untouched` });
      continue;
    }
    if (!json) continue;
    const next = structuredClone(json);
    if (!stripOurs(next, USER_MARK)) continue;
    actions.push(Object.keys(next).length ? { op: "update", path, content: pretty(next), detail: `remove user-scope git-handoff hooks from ${path}` } : { op: "remove", path, detail: `remove ${path} (it held only git-handoff hooks)` });
  }
  const script = join(layout.scriptDir, "agent-hook");
  if (existsSync(script)) actions.push({ op: "remove", path: script, detail: `remove ${script}` });
  return actions;
}
