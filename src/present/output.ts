import { fstatSync, statSync, writeSync } from "node:fs";
import { environmentRefusal } from "../core/environment.ts";
import { EXIT_CODES, HandoffError, isRecoverable, type Refusal } from "../core/errors.ts";
import { hungUp } from "./hung-up.ts";
import { nodeBinding } from "./node-binding.ts";
import { forTerminal, neutralise, styleMark, type StyleCode } from "./untrusted.ts";

// Output is written with write(2) on fd 1 and fd 2: the process.stdout and process.stderr getters
// build stream objects (the stream modules, net for a pipe), a tenth of `node -e 0` again for a
// one-shot command that prints a few lines. A full non-blocking pipe (EAGAIN) goes to the stream,
// and that fd stays on the stream so nothing is written out of order.
const onStream = new Set<number>();
/**
 * Fds nothing more is written to: a reader that left (EPIPE: `git handoff status | head`; EIO
 * on a terminal that hung up), or writes that fail (a full disk, a closed fd). The command still ends with its own status (a
 * refusal keeps its code); a failed stdout is reported at the end (outputFailure), since the
 * command's work is done and only its report is lost.
 */
const gone = new Set<number>();
let failedOutput: NodeJS.ErrnoException | null = null;

function writeFd(fd: 1 | 2, text: string): void {
  if (!text || gone.has(fd)) return;
  const buf = Buffer.from(text, "utf8");
  let off = 0;
  if (!onStream.has(fd)) {
    try {
      while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "EAGAIN") {
        gone.add(fd);
        if (fd === 1 && code !== "EPIPE" && !(code === "EIO" && hungUp(fd))) failedOutput ??= e as NodeJS.ErrnoException;
        return;
      }
      onStream.add(fd);
    }
  }
  (fd === 1 ? process.stdout : process.stderr).write(buf.subarray(off));
}

/** Why this command's output could not be written to stdout (not a reader that left), or null. */
export function outputFailure(): Refusal | null {
  if (!failedOutput) return null;
  const why = environmentRefusal(failedOutput)?.message ?? failedOutput.message;
  return {
    code: "environment",
    message: `the command ran, but its output could not be written: ${why}`,
    data: { cause: failedOutput.code ?? null },
    suggestions: [{ action: "fix_input", detail: "its work is done: send the output where it can be written (or free space there), then read the result again (task show, status)" }],
  };
}

export const writeOut = (text: string) => writeFd(1, text);
export const writeErr = (text: string) => writeFd(2, text);

/**
 * One output format for every command: `--json` prints the data (exact text), otherwise the text
 * rendering, escaped for the terminal in one pass (records hold other agents' text).
 */
export function emit(json: boolean, data: unknown, text: () => string): void {
  if (json) writeOut(JSON.stringify(data, null, 2) + "\n");
  else {
    const t = forTerminal(text(), useColor());
    if (t) writeOut(t.endsWith("\n") ? t : t + "\n");
  }
}

/**
 * What a bounded listing's `--limit` left out (`(N more, ...; raise --limit)`, the text's last
 * line), said on stderr with --json: the JSON stays the array it always was, and a script that
 * reads it can still tell it was cut.
 */
export function moreOnStderr(more: string): void {
  if (more.trim()) writeErr(`git-handoff: ${more.trim()}\n`);
}

export function warn(message: string): void {
  writeErr(`git-handoff: warning: ${neutralise(message)}\n`);
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

/**
 * Prints an error (one line ending in its stable code, then hints for refusals; with --json the
 * body goes to stdout and the line to stderr still) and returns the exit status from the table.
 */
export function reportError(e: unknown, json: boolean): number {
  const refusal = refusalOfError(e);
  if (json) writeOut(JSON.stringify({ error: errorBody(refusal) }, null, 2) + "\n");
  writeErr(`git-handoff: ${neutralise(refusal.message.split("\n")[0]!)} [${refusal.code}]\n`);
  if (!json) for (const s of refusal.suggestions ?? []) writeErr(`  ${s.action}: ${neutralise(s.detail)}\n`);
  if (refusal.code === "internal" && process.env.HANDOFF_DEBUG) writeErr(`${(e as Error)?.stack}\n`);
  return EXIT_CODES[refusal.code];
}

/**
 * Whether fd 1 (stdout) or 2 (stderr) is a terminal. A pipe or a file (not a character device),
 * or /dev/null, is not: answered by fstat without building the stream (about 4 ms of a cold
 * command for stderr). A character device is asked with isatty(3) itself, as the stream would
 * ask it: building the stream at a terminal loads net and the stream modules, ~150 KB of the young
 * generation, so a cold `task show` typed at a terminal was collected once before it answered.
 */
export function isTerminal(fd: 1 | 2): boolean {
  try {
    const out = fstatSync(fd);
    if (!out.isCharacterDevice() || out.rdev === statSync("/dev/null").rdev) return false;
  } catch {
    /* no such fd, or no /dev/null here: ask the stream */
  }
  return isatty(fd) ?? (fd === 1 ? process.stdout : process.stderr).isTTY === true;
}

/** isatty(3) through libuv's binding (what tty.isatty calls), or undefined where Node no longer offers it. */
function isatty(fd: number): boolean | undefined {
  try {
    const answer = nodeBinding<{ isTTY(fd: number): boolean }>("tty_wrap")?.isTTY(fd);
    return typeof answer === "boolean" ? answer : undefined;
  } catch {
    return undefined;
  }
}

let color: boolean | undefined;
const useColor = () => (color ??= !process.env.NO_COLOR && isTerminal(1));
/** Colours for text answers: markers that emit's last pass (forTerminal) turns into escapes. */
const styled = (code: StyleCode) => (s: string) => (useColor() ? `${styleMark(code)}${s}${styleMark("0")}` : s);
export const paint = { bold: styled("1"), dim: styled("2"), red: styled("31"), green: styled("32"), yellow: styled("33") };
