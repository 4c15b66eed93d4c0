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

/**
 * A hook's command line read apart: the word after `hook` is its name, the words after that its
 * arguments; `-C <dir>` (each in turn) and `--agent <name>`/`--agent=<name>` (the last) are taken
 * out wherever they stand. The dispatcher picks the hook's bundle by the name (the pre-edit hooks
 * have their own), the bundle runs by all of it (hook-run.ts parseArgs): one reading for both.
 */
export function hookWords(argv: string[]): { name: string; args: string[]; dirs: string[]; agent: string | undefined } {
  const dirs: string[] = [];
  let agent: string | undefined;
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "-C") dirs.push(argv[++i] ?? ".");
    else if (a === "--agent") agent = argv[++i];
    else if (a.startsWith("--agent=")) agent = a.slice(8);
    else words.push(a);
  }
  const at = words.indexOf("hook");
  return { name: words[at + 1] ?? "", args: words.slice(at + 2), dirs, agent };
}
