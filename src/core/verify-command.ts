import { fail } from "./errors.ts";
import { MAX_COMMAND } from "./review-record.ts";

/** A verification command is one line of shell, bounded, without control characters. */
export function checkVerifyCommand(cmd: string): string {
  const c = cmd.trim();
  if (!c) fail("invalid_input", "--verify needs a command");
  if (c.length > MAX_COMMAND) fail("invalid_input", `verify command is ${c.length} characters; at most ${MAX_COMMAND}`);
  if (/[\x00-\x08\x0a-\x1f]/.test(c)) fail("invalid_input", "verify command may not contain control characters or newlines");
  return c;
}
