// Each agent's hook protocol: where the edited paths are in its payload, and the exact answer it
// reads back. The decision itself is the same for all (see edit-check.ts).
import { fail } from "../core/errors.ts";
import { neutralise } from "../present/untrusted.ts";
import { patchPaths } from "./apply-patch.ts";
import { shellPatch, shellWords } from "./shell-command.ts";

export type AgentKind = "claude" | "codex" | "cursor" | "gemini";

/** What a pre-edit hook needs from a payload: nothing more is trusted. */
export interface EditIntent {
  tool: string;
  /** Paths as the agent gave them (absolute, or relative to cwd). Empty: not an edit we check. */
  paths: string[];
  cwd: string | null;
  /** The paths are words of a shell command: they may be reads, so they are warned about, never denied. */
  shell: boolean;
}

/** Tools that write files, per agent. Anything else passes unchecked (the matcher should not send it). */
const EDIT_TOOLS: Record<AgentKind, Set<string>> = {
  claude: new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"]),
  codex: new Set(["apply_patch", "ApplyPatch", "Edit", "Write"]),
  cursor: new Set(["Write", "Edit", "MultiEdit", "StrReplace", "Delete", "edit_file", "write", "search_replace", "delete_file"]),
  gemini: new Set(["write_file", "replace", "edit"]),
};

/** Shell tools, per agent: an apply_patch run through them is an edit, any other command a word scan. */
const SHELL_TOOLS: Record<AgentKind, Set<string>> = {
  claude: new Set(["Bash"]),
  codex: new Set(["Bash", "exec_command", "shell", "shell_command", "local_shell"]),
  cursor: new Set([]),
  gemini: new Set(["run_shell_command"]),
};

function str(v: unknown): string | null {
  return typeof v === "string" && v.length > 0 ? v : null;
}

export function editIntent(kind: AgentKind, payload: Record<string, unknown>): EditIntent {
  const tool = str(payload.tool_name) ?? "";
  const input = (typeof payload.tool_input === "object" && payload.tool_input !== null ? payload.tool_input : {}) as Record<string, unknown>;
  const roots = Array.isArray(payload.workspace_roots) ? payload.workspace_roots : [];
  const cwd = str(payload.cwd) ?? str(roots[0]) ?? null;
  if (!tool) fail("invalid_input", `${kind} payload has no tool_name`);
  if (SHELL_TOOLS[kind].has(tool)) return shellIntent(kind, tool, input, cwd);
  if (!EDIT_TOOLS[kind].has(tool)) return { tool, paths: [], cwd, shell: false };
  let paths: string[];
  if (kind === "codex" && (tool === "apply_patch" || tool === "ApplyPatch")) {
    const cmd = input.command ?? input.patch ?? input.input;
    const text = Array.isArray(cmd) ? cmd.filter((c) => typeof c === "string").join("\n") : str(cmd);
    if (!text) fail("invalid_input", `${kind} ${tool} payload has no patch in tool_input.command`);
    paths = patchPaths(text);
    if (!paths.length) fail("invalid_input", `${kind} ${tool} patch names no file (*** Add File: / *** Update File: / *** Delete File: / *** Move to:)`);
  } else {
    const p = str(input.file_path) ?? str(input.notebook_path) ?? str(input.path) ?? str(input.target_file) ?? str(input.absolute_path);
    if (!p) fail("invalid_input", `${kind} ${tool} payload has no file path in tool_input (file_path)`);
    paths = [p];
  }
  return { tool, paths, cwd, shell: false };
}

function shellIntent(kind: AgentKind, tool: string, input: Record<string, unknown>, cwd: string | null): EditIntent {
  const cmd = input.command ?? input.cmd;
  const text = Array.isArray(cmd) ? cmd.filter((c) => typeof c === "string").join(" ") : str(cmd);
  if (!text) fail("invalid_input", `${kind} ${tool} payload has no command in tool_input.command`);
  const patch = shellPatch(text);
  if (patch !== null) {
    const paths = patchPaths(patch);
    if (!paths.length) fail("invalid_input", `${kind} ${tool} runs apply_patch with a patch that names no file`);
    return { tool, paths, cwd, shell: false };
  }
  return { tool, paths: shellWords(text), cwd, shell: true };
}

/** The outcome of a pre-edit check, before it is put in an agent's words. */
export interface EditAnswer {
  decision: "deny" | "allow";
  /** Text for the agent: why it is denied, or the warning it should know about. Empty when ok. */
  text: string;
}

/**
 * Gemini CLI reads additional context only after a tool ran (AfterTool), not before: its
 * BeforeTool answer shows the user a message, this one tells the model.
 */
export function afterToolAnswer(text: string): { stdout: string; code: number } {
  // Escaped like every other answer: the text quotes shared records.
  return { stdout: text ? JSON.stringify({ hookSpecificOutput: { hookEventName: "AfterTool", additionalContext: neutralise(text) } }) + "\n" : "", code: 0 };
}

/** The stdout and exit status each agent reads. Exit 0 with JSON everywhere: it carries the reason. */
export function formatAnswer(kind: AgentKind, answer: EditAnswer): { stdout: string; code: number } {
  // The text names holders, tasks and paths from shared records; agents show it to people.
  const a = { ...answer, text: neutralise(answer.text) };
  const json = (v: unknown) => ({ stdout: JSON.stringify(v) + "\n", code: 0 });
  switch (kind) {
    case "claude":
    case "codex":
      // No "allow" when all is well: that would skip the user's own permission prompt for edits.
      if (a.decision === "deny") {
        return json({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: a.text } });
      }
      return a.text ? json({ hookSpecificOutput: { hookEventName: "PreToolUse", additionalContext: a.text } }) : { stdout: "", code: 0 };
    case "cursor":
      if (a.decision === "deny") return json({ permission: "deny", user_message: firstLine(a.text), agent_message: a.text });
      return json(a.text ? { permission: "allow", user_message: firstLine(a.text), agent_message: a.text } : { permission: "allow" });
    case "gemini":
      if (a.decision === "deny") return json({ decision: "deny", reason: a.text });
      return a.text
        ? json({ systemMessage: firstLine(a.text), hookSpecificOutput: { hookEventName: "BeforeTool", additionalContext: a.text } })
        : json({});
  }
}

function firstLine(s: string): string {
  return s.split("\n")[0] ?? "";
}
