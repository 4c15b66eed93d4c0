// Shared documents: longer texts several agents build on (a design note, an API contract), one ref
// per document, each version a commit, so `git log` of the ref is the document's history.
import { fail } from "./errors.ts";
import { refComponentProblem } from "./ids.ts";

export const DOC_FORMAT = 1;
export const MAX_DOC_BYTES = 512 * 1024;

export function validateDocName(name: string): string {
  const problem = refComponentProblem(name);
  if (problem) fail("invalid_input", `invalid document name ${JSON.stringify(name.slice(0, 80))}: it ${problem}`);
  return name;
}

/** Why this content cannot be a shared document, or null: bounded, UTF-8 text without NUL. */
export function docContentProblem(content: Buffer): string | null {
  if (content.length > MAX_DOC_BYTES) return `is ${content.length} bytes; at most ${MAX_DOC_BYTES}`;
  if (content.includes(0)) return "is binary (holds a NUL byte); documents are text";
  if (!Buffer.from(content.toString("utf8"), "utf8").equals(content)) return "is not valid UTF-8";
  return null;
}
