// Text that came from a record or another agent (objectives, notes, reasons, contracts, questions,
// names, branches, paths) is escaped for terminals here, and only here: every text view, hook
// answer and MCP text goes through `neutralise`. `--json` keeps the exact text.
// Handoff text (contract, note, questions, verification output) is also fenced and labelled, so it
// reads as data, not as instructions.

import { hasUnsafeChar, loopFirst } from "../core/char-scan.ts";
import { UNTRUSTED_LABEL } from "../core/untrusted.ts";

export { UNTRUSTED_LABEL };

/**
 * C0 controls but tab and newline (so CR and BEL too), DEL, C1 controls (U+0080-U+009F, incl. the
 * one-byte CSI), and the bidirectional controls that reorder what a reader sees (U+061C, U+200E,
 * U+200F, U+202A-U+202E, U+2066-U+2069).
 */
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function visible(c: string): string {
  const n = c.charCodeAt(0);
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16).padStart(4, "0")}`;
}

/** Every character that could steer a terminal or reorder text becomes a visible escape. */
export function neutralise(text: string): string {
  return hasUnsafe(text) ? text.replace(UNSAFE, visible) : text;
}

/** UNSAFE's test (char-scan.ts loopFirst): an answer's text is neutralised once or twice, a listing's every field. */
const hasUnsafe = loopFirst(hasUnsafeChar, new RegExp(UNSAFE.source));

/** `neutralise`, and newlines and tabs too: for a value shown inside one line. */
export function neutraliseLine(text: string): string {
  return neutralise(text).replace(/[\t\n]/g, (c) => (c === "\n" ? "\\n" : "\\t"));
}

/**
 * Our own styles (output.ts `paint`) travel through a rendering as markers that hold a key made
 * at random by this process, and become escape sequences only in the last pass. A record's text
 * cannot hold the key, so an ESC[32m inside another agent's text stays a visible escape, even
 * where a rendering forgot to neutralise a field: matching the escapes themselves, as this did,
 * kept every `ESC[0m`, `ESC[31m` in data raw and let a record restyle the lines around it.
 */
const KEY = Math.random().toString(36).slice(2, 10).padEnd(8, "0");
const MARK = new RegExp(`\ue000${KEY}(0|1|2|31|32|33)\ue001`, "g");

export type StyleCode = "0" | "1" | "2" | "31" | "32" | "33";

export function styleMark(code: StyleCode): string {
  return `\ue000${KEY}${code}\ue001`;
}

/**
 * The last pass over a text answer before it reaches a terminal: whatever a rendering let through,
 * nothing but our own colours survives. Idempotent, so text neutralised earlier is unchanged.
 */
export function forTerminal(text: string, keepOwnStyles: boolean): string {
  const safe = neutralise(text);
  // Without a marker's first character there is nothing to replace: a text with no style of ours
  // (most answers of a cold command) does not compile MARK, a pattern each process makes anew.
  return safe.includes("\ue000") ? safe.replace(MARK, (_, code: string) => (keepOwnStyles ? `\x1b[${code}m` : "")) : safe;
}

/** Each line behind a bar, so nothing in the text can pose as a line of our own output. */
export function fence(text: string, indent = "    "): string {
  return neutralise(text.replace(/\r\n/g, "\n"))
    .split("\n")
    .map((l) => `${indent}| ${l}`)
    .join("\n");
}
