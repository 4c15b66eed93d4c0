import { environmentRefusal } from "../core/environment.ts";
import { EXIT_CODES, HandoffError, isRecoverable, type Refusal } from "../core/errors.ts";
import { forTerminal, neutralise } from "./untrusted.ts";

/**
 * One output format for every command: `--json` prints the data (exact text), otherwise the text
 * rendering, escaped for the terminal in one pass (records hold other agents' text).
 */
export function emit(json: boolean, data: unknown, text: () => string): void {
  if (json) process.stdout.write(JSON.stringify(data, null, 2) + "\n");
  else {
    const t = forTerminal(text(), useColor());
    if (t) process.stdout.write(t.endsWith("\n") ? t : t + "\n");
  }
}

export function warn(message: string): void {
  process.stderr.write(`git-handoff: warning: ${neutralise(message)}\n`);
}

/** The error body shared with the MCP server: code, message, recoverable, data, suggestions. */
export function errorBody(r: Refusal): Record<string, unknown> {
  return { code: r.code, message: r.message, recoverable: isRecoverable(r.code), data: r.data ?? {}, suggestions: r.suggestions ?? [] };
}

/** The refusal an error reports: its own, an environment failure (disk, permissions), else a bug. */
export function refusalOfError(e: unknown): Refusal {
  if (e instanceof HandoffError) return e.refusal;
  return environmentRefusal(e) ?? { code: "internal", message: `unexpected error: ${(e as Error)?.message ?? String(e)}` };
}

/** Prints an error (one line, then hints for refusals) and returns the exit status from the table. */
export function reportError(e: unknown, json: boolean): number {
  const refusal = refusalOfError(e);
  if (json) process.stdout.write(JSON.stringify({ error: errorBody(refusal) }, null, 2) + "\n");
  process.stderr.write(`git-handoff: ${neutralise(refusal.message.split("\n")[0]!)}\n`);
  if (!json) for (const s of refusal.suggestions ?? []) process.stderr.write(`  ${s.action}: ${neutralise(s.detail)}\n`);
  if (refusal.code === "internal" && process.env.HANDOFF_DEBUG) process.stderr.write(`${(e as Error)?.stack}\n`);
  return EXIT_CODES[refusal.code];
}

const useColor = () => process.stdout.isTTY === true && !process.env.NO_COLOR;
export const paint = {
  bold: (s: string) => (useColor() ? `\x1b[1m${s}\x1b[0m` : s),
  dim: (s: string) => (useColor() ? `\x1b[2m${s}\x1b[0m` : s),
  red: (s: string) => (useColor() ? `\x1b[31m${s}\x1b[0m` : s),
  green: (s: string) => (useColor() ? `\x1b[32m${s}\x1b[0m` : s),
  yellow: (s: string) => (useColor() ? `\x1b[33m${s}\x1b[0m` : s),
};
