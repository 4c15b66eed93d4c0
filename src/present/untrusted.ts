// Text in a handoff (contract, note, questions, verification output) was written by another agent.
// Wherever it is shown to an agent it is fenced and labelled, so it reads as data, not as
// instructions, and control characters (terminal escapes) are neutralised.

import { UNTRUSTED_LABEL } from "../core/untrusted.ts";

export { UNTRUSTED_LABEL };

export function neutralise(text: string): string {
  return text.replace(/\r\n?/g, "\n").replace(/[\x00-\x08\x0b-\x1f\x7f\x9b]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** Each line behind a bar, so nothing in the text can pose as a line of our own output. */
export function fence(text: string, indent = "    "): string {
  return neutralise(text)
    .split("\n")
    .map((l) => `${indent}| ${l}`)
    .join("\n");
}
