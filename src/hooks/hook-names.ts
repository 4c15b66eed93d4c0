// The hooks `git handoff hook <name>` runs, by name: one list for the hook bundle that serves them
// and the CLI's help that lists them (which must not load that bundle).
import type { AgentKind } from "./agents.ts";

/** Before an edit or a command: each agent's own payload and answer shape. */
export const AGENT_HOOKS: Record<string, AgentKind> = {
  "claude-pre-tool-use": "claude",
  "codex-pre-tool-use": "codex",
  "cursor-pre-tool-use": "cursor",
  "gemini-before-tool": "gemini",
};
/** SessionStart: the same context and the same answer shape for each agent that has the event. */
export const SESSION_HOOKS = ["claude-session-start", "codex-session-start", "gemini-session-start"];
/** Context only, never a block: what Gemini's model is told after an edit or command ran. */
export const AFTER_HOOKS = ["gemini-after-tool"];
const OTHER_HOOKS = ["pre-commit", "pre-push", ...SESSION_HOOKS, ...AFTER_HOOKS];
export const HOOK_NAMES = [...Object.keys(AGENT_HOOKS), ...OTHER_HOOKS];
