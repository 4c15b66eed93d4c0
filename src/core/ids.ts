// Names that become part of a ref (task ids, agent ids) are checked against an allow-list that is
// stricter than `git check-ref-format`, so nothing a user types can leave refs/handoff/.
import { isIdText, loopFirst } from "./char-scan.ts";
import { fail } from "./errors.ts";

const isId = loopFirst(isIdText, /^[A-Za-z0-9][A-Za-z0-9._@+-]*$/);
export const MAX_ID_LENGTH = 64;

/** Returns why `id` cannot be a ref component, or null when it can. */
export function refComponentProblem(id: string): string | null {
  if (id.length === 0) return "is empty";
  if (id.length > MAX_ID_LENGTH) return `is longer than ${MAX_ID_LENGTH} characters`;
  if (!isId(id)) return "may only contain letters, digits and . _ @ + - and must start with a letter or digit";
  if (id.includes("..")) return "may not contain '..'";
  if (id.endsWith(".lock")) return "may not end with '.lock'";
  if (id.endsWith(".")) return "may not end with '.'";
  return null;
}

function printable(s: string): string {
  const shown = JSON.stringify(s.length > 80 ? s.slice(0, 80) + "…" : s);
  return shown;
}

export function validateTaskId(id: string): string {
  const problem = refComponentProblem(id);
  if (problem) fail("invalid_input", `invalid task id ${printable(id)}: it ${problem}`);
  return id;
}

export function validateAgentId(id: string): string {
  const problem = refComponentProblem(id);
  if (problem) fail("invalid_input", `invalid agent name ${printable(id)}: it ${problem}`);
  return id;
}

/**
 * Why a commit author's name on a record ref cannot be an agent's, or null. Every writer of ours
 * names an agent (validateAgentId) or git-handoff, so a name holding a control character (a
 * terminal escape, a bidirectional override, a newline) was written by hand: refused on receive.
 */
export function authorNameProblem(name: string): string | null {
  const bad = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.exec(name);
  return bad ? `holds the control character U+${bad[0].charCodeAt(0).toString(16).padStart(4, "0").toUpperCase()}` : null;
}

/** Turns free text (a user name, a host, a folder) into something `refComponentProblem` accepts. */
export function sanitizeIdPart(raw: string): string {
  const cleaned = raw
    .replace(/[^A-Za-z0-9._+-]+/g, "-")
    .replace(/\.{2,}/g, ".")
    .replace(/^[^A-Za-z0-9]+/, "")
    .replace(/[.-]+$/, "");
  return cleaned.length > 0 ? cleaned.slice(0, 24) : "x";
}

const ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case

/**
 * A short task id that is unique across clones with overwhelming probability: 8 random base32
 * characters (40 bits). Creation is create-only compare-and-swap, so a local collision is caught
 * and retried with a fresh id.
 */
export function newTaskId(random: Uint8Array): string {
  let out = "t-";
  for (let i = 0; i < 8; i++) out += ID_ALPHABET[(random[i] ?? 0) & 31];
  return out;
}
