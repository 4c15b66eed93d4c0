// `git handoff init` / `uninstall` for hooks: git hooks and the agents' hook configs. Planned
// first (so --dry-run shows exactly what would change), then applied. Existing files are merged,
// never clobbered, and backed up before the first change; an existing git hook keeps running.
import { canonicalJson } from "../core/canonical-json.ts";
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";

export const GIT_HOOKS = ["pre-commit", "pre-push"] as const;
/**
 * Our entries run `git-handoff hook <name>` directly (going through `git handoff` costs a git
 * process per edit), and the pre-edit hooks `git-handoff-hook <name>`: the sh fast path
 * (git-hooks/fast-hook.sh), which starts Node only when the full hook has something to say.
 */
const MARK = /git[- ]handoff[- ]hook/;
const KEPT = ".pre-handoff";
const BACKUP = ".handoff-backup";

export interface Action {
  /** `ok`: already in place, nothing to do (said, not applied). */
  op: "create" | "update" | "remove" | "rename" | "backup" | "note" | "ok";
  path: string;
  /** For rename: the new path; for create/update: the new content. */
  to?: string;
  content?: string;
  mode?: number;
  detail: string;
  /** A note that asks the person for a step git-handoff cannot take itself. */
  needsYou?: boolean;
}

export interface HookLayout {
  workTree: string;
  /** `git rev-parse --git-path hooks`, absolute. */
  hooksDir: string;
  /** core.hooksPath as configured, or null. */
  hooksPath: string | null;
  /** Where core.hooksPath is set when that is outside this repository (global, system): its hooks run in every repository. */
  hooksPathScope?: string | null;
}

// --- agent configs -------------------------------------------------------------------------------

interface AgentConfig {
  /** How `init --agents` names it. */
  key: string;
  file: string;
  name: string;
  /** Adds our entries to a parsed config; returns false when they were already there. */
  add(json: Record<string, any>): boolean;
  note?: string;
}

const cmd = (hook: string) => `git-handoff hook ${hook}`;
/** The hooks that run before every edit: through the fast path. */
const fast = (hook: string) => `git-handoff-hook ${hook}`;

/** Entries an earlier init wrote as `git-handoff hook <name>` now run the fast path: rewritten in place. */
function upgradeToFast(json: Record<string, any>, hook: string): boolean {
  let changed = false;
  const visit = (v: any) => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === "object") {
      if (v.command === cmd(hook)) {
        v.command = fast(hook);
        changed = true;
      }
      Object.values(v).forEach(visit);
    }
  };
  visit(json.hooks);
  return changed;
}

/** Codex skips an untrusted hook without a word: say so wherever the hook is installed or checked. */
export const CODEX_TRUST_NOTE =
  "Codex runs these hooks only in a trusted project and once each is approved by its content hash: start codex here, trust the folder, and approve the git-handoff hooks in /hooks (again after any change to .codex/hooks.json). Until then Codex skips them silently";

/** Lets headless Claude Code (`claude -p`) call our MCP tools, which it otherwise refuses. */
export const CLAUDE_MCP_PERMISSION = "mcp__git-handoff";

function addPermission(json: Record<string, any>, rule: string): boolean {
  json.permissions ??= {};
  const allow: unknown[] = (json.permissions.allow ??= []);
  if (allow.includes(rule)) return false;
  allow.push(rule);
  return true;
}

/** Undoes addPermission, dropping containers it leaves empty. */
function stripPermission(json: Record<string, any>, rule: string): boolean {
  const allow = json.permissions?.allow;
  if (!Array.isArray(allow) || !allow.includes(rule)) return false;
  json.permissions.allow = allow.filter((r) => r !== rule);
  if (!json.permissions.allow.length) delete json.permissions.allow;
  if (!Object.keys(json.permissions).length) delete json.permissions;
  return true;
}

/** Claude-style groups: `hooks.<Event>: [{matcher, hooks: [{type, command, timeout}]}]`. */
export function addGroup(json: Record<string, any>, event: string, group: Record<string, unknown>, command: string): boolean {
  json.hooks ??= {};
  const list: any[] = (json.hooks[event] ??= []);
  if (JSON.stringify(list).includes(command)) return false;
  list.push(group);
  return true;
}

const AGENTS: AgentConfig[] = [
  {
    key: "claude",
    file: ".claude/settings.json",
    name: "Claude Code",
    add(json) {
      // Bash too: a command naming a file under another agent's exclusive lease is warned about.
      const u = upgradeToFast(json, "claude-pre-tool-use");
      const a = addGroup(json, "PreToolUse", { matcher: "Edit|Write|MultiEdit|NotebookEdit|Bash", hooks: [{ type: "command", command: fast("claude-pre-tool-use"), timeout: 10 }] }, fast("claude-pre-tool-use")) || u;
      const b = addGroup(json, "SessionStart", { hooks: [{ type: "command", command: cmd("claude-session-start"), timeout: 10 }] }, cmd("claude-session-start"));
      const c = addPermission(json, CLAUDE_MCP_PERMISSION);
      return a || b || c;
    },
    note: `Claude Code applies the project permission ${CLAUDE_MCP_PERMISSION} (MCP tools in headless claude -p) once the folder is trusted; or pass --allowedTools ${CLAUDE_MCP_PERMISSION}. It reads .claude/settings.json only in the folder it starts in: for starts in subfolders, git handoff init --user`,
  },
  {
    key: "codex",
    file: ".codex/hooks.json",
    name: "Codex",
    add(json) {
      // Bash: Codex reports apply_patch run through its shell tool as Bash, with the patch in the command.
      const u = upgradeToFast(json, "codex-pre-tool-use");
      const a = addGroup(json, "PreToolUse", { matcher: "apply_patch|Bash", hooks: [{ type: "command", command: fast("codex-pre-tool-use"), timeout: 10 }] }, fast("codex-pre-tool-use")) || u;
      const b = addGroup(json, "SessionStart", { hooks: [{ type: "command", command: cmd("codex-session-start"), timeout: 10 }] }, cmd("codex-session-start"));
      return a || b;
    },
    note: CODEX_TRUST_NOTE,
  },
  {
    key: "cursor",
    file: ".cursor/hooks.json",
    name: "Cursor",
    add(json) {
      json.version ??= 1;
      json.hooks ??= {};
      const list: any[] = (json.hooks.preToolUse ??= []);
      if (upgradeToFast(json, "cursor-pre-tool-use")) return true;
      if (JSON.stringify(list).includes(fast("cursor-pre-tool-use"))) return false;
      list.push({ command: fast("cursor-pre-tool-use") });
      return true;
    },
  },
  {
    key: "gemini",
    file: ".gemini/settings.json",
    name: "Gemini CLI",
    add(json) {
      const tools = "write_file|replace|run_shell_command";
      const u = [upgradeToFast(json, "gemini-before-tool"), upgradeToFast(json, "gemini-after-tool")].some(Boolean);
      const a = addGroup(json, "BeforeTool", { matcher: tools, hooks: [{ name: "git-handoff", type: "command", command: fast("gemini-before-tool"), timeout: 10000 }] }, fast("gemini-before-tool")) || u;
      // Gemini tells its model nothing from BeforeTool but a denial: warnings go after the tool ran.
      const b = addGroup(json, "AfterTool", { matcher: tools, hooks: [{ name: "git-handoff-context", type: "command", command: fast("gemini-after-tool"), timeout: 10000 }] }, fast("gemini-after-tool")) || u;
      const c = addGroup(json, "SessionStart", { hooks: [{ name: "git-handoff-session", type: "command", command: cmd("gemini-session-start"), timeout: 10000 }] }, cmd("gemini-session-start"));
      return a || b || c;
    },
    note: "Gemini CLI runs project hooks only in a trusted folder (trust it when asked, or list it in ~/.gemini/trustedFolders.json); --skip-trust loads none",
  },
];

/** The names `init --agents` takes. */
export const AGENT_KEYS: string[] = AGENTS.map((a) => a.key);

/** The agent hook configs init writes, for doctor. */
export const AGENT_CONFIG_FILES: { file: string; name: string }[] = AGENTS.map((a) => ({ file: a.file, name: a.name }));

/** Removes every hook entry whose command matches `mark` (ours), and containers left empty. */
export function stripOurs(json: Record<string, any>, mark: RegExp = MARK): boolean {
  const hooks = json.hooks;
  if (!hooks || typeof hooks !== "object") return false;
  let changed = false;
  for (const event of Object.keys(hooks)) {
    const list = hooks[event];
    if (!Array.isArray(list)) continue;
    const kept: any[] = [];
    for (const group of list) {
      if (typeof group?.command === "string" && mark.test(group.command)) {
        changed = true;
        continue;
      }
      if (Array.isArray(group?.hooks)) {
        const inner = group.hooks.filter((h: any) => !(typeof h?.command === "string" && mark.test(h.command)));
        if (inner.length !== group.hooks.length) changed = true;
        if (!inner.length) continue;
        kept.push({ ...group, hooks: inner });
      } else kept.push(group);
    }
    if (kept.length) hooks[event] = kept;
    else delete hooks[event];
  }
  if (!Object.keys(hooks).length) delete json.hooks;
  return changed;
}

export function readJson(path: string): { json: Record<string, any> | null; error: string | null; exists: boolean } {
  if (!existsSync(path)) return { json: null, error: null, exists: false };
  try {
    const v = JSON.parse(readFileSync(path, "utf8"));
    if (typeof v !== "object" || v === null || Array.isArray(v)) return { json: null, error: "not a JSON object", exists: true };
    return { json: v, error: null, exists: true };
  } catch (e) {
    return { json: null, error: (e as Error).message.split("\n")[0]!, exists: true };
  }
}

export const pretty = (v: unknown) => JSON.stringify(v, null, 2) + "\n";

/** `uncommitted`: agent config files (relative paths) not committed as they stand. */
function planAgentsInstall(root: string, agents: string[], uncommitted: ReadonlySet<string>): Action[] {
  const actions: Action[] = [];
  const written: string[] = [];
  for (const a of AGENTS.filter((x) => agents.includes(x.key))) {
    const path = join(root, a.file);
    const { json, error, exists } = readJson(path);
    if (error) {
      actions.push({ op: "note", path, needsYou: true, detail: `${a.name}: ${a.file} is not valid JSON (${error}); left untouched. Fix it and run init again` });
      continue;
    }
    const next = structuredClone(json ?? {});
    if (a.add(next)) {
      if (exists && !existsSync(path + BACKUP)) actions.push({ op: "backup", path, to: path + BACKUP, detail: `back up ${a.file}` });
      actions.push({ op: exists ? "update" : "create", path, content: pretty(next), detail: `${a.name}: ${exists ? "add" : "configure"} git-handoff hooks in ${a.file}` });
      written.push(a.file);
    } else {
      actions.push({ op: "ok", path, detail: `${a.name}: git-handoff hooks in ${a.file}` });
      // Written by an earlier init and still not committed: the other worktrees still lack it.
      if (uncommitted.has(a.file)) written.push(a.file);
    }
    // Said on every init, not only the first: the client may still be skipping the hooks.
    if (a.note) actions.push({ op: "note", path, detail: a.note });
  }
  // Linked worktrees and other clones read the agent configs from the commit they check out.
  if (written.length) actions.push({ op: "note", path: root, needsYou: true, detail: `commit ${written.join(" ")} so linked worktrees and other clones get the agent hooks` });
  return actions;
}

function readBackup(path: string): { text: string; json: unknown } | null {
  try {
    const text = readFileSync(path, "utf8");
    return { text, json: JSON.parse(text) };
  } catch {
    return null;
  }
}

function planAgentsUninstall(root: string): Action[] {
  const actions: Action[] = [];
  for (const a of AGENTS) {
    const path = join(root, a.file);
    const { json, error } = readJson(path);
    if (error) {
      actions.push({ op: "note", path, detail: `${a.file} is not valid JSON (${error}); left untouched` });
      continue;
    }
    if (!json) continue;
    const next = structuredClone(json);
    const permission = a.file === ".claude/settings.json" && stripPermission(next, CLAUDE_MCP_PERMISSION);
    if (!stripOurs(next) && !permission) continue;
    // The copy init made before its first change: when nothing but our hooks changed since, the
    // user gets that file back byte for byte, and the copy goes.
    const backup = readBackup(path + BACKUP);
    if (backup && canonicalJson(backup.json) === canonicalJson(next)) {
      actions.push({ op: "update", path, content: backup.text, detail: `restore ${a.file} as it was before git-handoff` }, { op: "remove", path: path + BACKUP, detail: `remove ${a.file}${BACKUP}` });
      continue;
    }
    const emptyish = Object.keys(next).every((k) => k === "version");
    actions.push(emptyish ? { op: "remove", path, detail: `remove ${a.file} (it held only git-handoff hooks)` } : { op: "update", path, content: pretty(next), detail: `remove git-handoff hooks from ${a.file}` });
    if (backup) actions.push({ op: "note", path: path + BACKUP, detail: `${a.file} changed since git-handoff backed it up: kept ${a.file}${BACKUP} for you to compare` });
  }
  return actions;
}

// --- git hooks -----------------------------------------------------------------------------------

function template(name: string, templatesDir: string): string {
  return readFileSync(join(templatesDir, name), "utf8");
}

export function isHusky(layout: HookLayout): boolean {
  return /(^|\/)\.husky(\/_)?\/?$/.test(layout.hooksPath ?? "") || existsSync(join(layout.workTree, ".husky"));
}

export function lefthookFile(root: string): string | null {
  for (const f of ["lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml"]) if (existsSync(join(root, f))) return f;
  return null;
}

function planGitInstall(layout: HookLayout, templatesDir: string): Action[] {
  const lefthook = lefthookFile(layout.workTree);
  if (lefthook) {
    const snippet = [
      "pre-commit:",
      "  commands:",
      "    git-handoff:",
      "      run: git-handoff hook pre-commit",
      "pre-push:",
      "  commands:",
      "    git-handoff:",
      "      run: git-handoff hook pre-push {1} {2}",
      "      use_stdin: true",
    ].join("\n");
    return [{ op: "note", path: join(layout.workTree, lefthook), needsYou: true, detail: `lefthook manages git hooks here; add to ${lefthook}:\n${snippet}` }];
  }
  if (layout.hooksPathScope) {
    return [{ op: "note", path: layout.hooksDir, needsYou: true, detail: sharedHooksAdvice(layout) }];
  }
  if (isHusky(layout)) {
    return GIT_HOOKS.map((h) => ({
      op: "note" as const,
      path: join(layout.workTree, ".husky", h),
      needsYou: true,
      detail: h === "pre-commit" ? `husky manages git hooks here; add this line to .husky/pre-commit:\ngit-handoff hook pre-commit` : `add this line to .husky/pre-push:\ngit-handoff hook pre-push "$@"`,
    }));
  }
  const actions: Action[] = [];
  for (const h of GIT_HOOKS) {
    const path = join(layout.hooksDir, h);
    const content = template(h, templatesDir);
    if (existsSync(path)) {
      const current = readFileSync(path, "utf8");
      if (current === content) {
        actions.push({ op: "ok", path, detail: `the git ${h} hook` });
        continue;
      }
      if (MARK.test(current)) {
        actions.push({ op: "update", path, content, mode: 0o755, detail: `update the git ${h} hook` });
        continue;
      }
      if (existsSync(path + KEPT)) {
        actions.push({ op: "note", path, needsYou: true, detail: `${path} and ${path}${KEPT} both exist; not touched. Add this line to ${path}: git-handoff hook ${h}${h === "pre-push" ? ' "$@"' : ""}` });
        continue;
      }
      actions.push({ op: "rename", path, to: path + KEPT, detail: `keep the existing ${h} hook as ${h}${KEPT} (it still runs first)` });
    }
    actions.push({ op: "create", path, content, mode: 0o755, detail: `install the git ${h} hook${layout.hooksPath ? ` in core.hooksPath ${layout.hooksPath}` : ""}` });
  }
  return actions;
}

/**
 * A hooks folder named in the global or system git config runs in every repository of the user:
 * installing there would check (and slow) commits everywhere, and an uninstall anywhere would
 * remove it for all. A repository's own setting wins over it.
 */
/** The scope of core.hooksPath when it is shared by every repository of the user, else null. */
export function sharedScope(scope: string | undefined): string | null {
  return scope === "global" || scope === "system" ? scope : null;
}

export function sharedHooksAdvice(layout: HookLayout): string {
  return `core.hooksPath ${layout.hooksPath} comes from your ${layout.hooksPathScope} git config, so its hooks run in every repository: not changed. For this repository only: git config core.hooksPath .git/hooks, then git handoff init again`;
}

function planGitUninstall(layout: HookLayout): Action[] {
  const actions: Action[] = [];
  for (const h of GIT_HOOKS) {
    const path = join(layout.hooksDir, h);
    if (!existsSync(path) || !MARK.test(readFileSync(path, "utf8"))) continue;
    actions.push({ op: "remove", path, detail: `remove the git ${h} hook` });
    if (existsSync(path + KEPT)) actions.push({ op: "rename", path: path + KEPT, to: path, detail: `restore the earlier ${h} hook` });
  }
  return actions;
}

/** `agents`: which agents' configs to write (AGENT_KEYS; default all). */
export function planInstall(layout: HookLayout, templatesDir: string, agents: string[] = AGENT_KEYS, uncommitted: ReadonlySet<string> = new Set()): Action[] {
  return [...planGitInstall(layout, templatesDir), ...planAgentsInstall(layout.workTree, agents, uncommitted)];
}

export function planUninstall(layout: HookLayout): Action[] {
  return [...planGitUninstall(layout), ...planAgentsUninstall(layout.workTree)];
}

export function applyActions(actions: Action[]): void {
  for (const a of actions) {
    switch (a.op) {
      case "create":
      case "update":
        mkdirSync(dirname(a.path), { recursive: true });
        writeFileSync(a.path + ".tmp-handoff", a.content!);
        if (a.mode) chmodSync(a.path + ".tmp-handoff", a.mode);
        renameSync(a.path + ".tmp-handoff", a.path);
        break;
      case "backup":
        copyFileSync(a.path, a.to!);
        break;
      case "rename":
        renameSync(a.path, a.to!);
        break;
      case "remove":
        rmSync(a.path, { force: true });
        break;
      case "note":
      case "ok":
        break;
    }
  }
}

/** Where git runs hooks: core.hooksPath (relative to the worktree root) or the repo's hooks dir. */
export function hooksDirFrom(workTree: string, gitPathHooks: string, hooksPath: string | null): string {
  if (hooksPath) return isAbsolute(hooksPath) ? hooksPath : resolve(workTree, hooksPath);
  return isAbsolute(gitPathHooks) ? gitPathHooks : resolve(workTree, gitPathHooks);
}
