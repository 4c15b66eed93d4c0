// The worker's --exec and the loop's --agent-cmd are their local user's own command line, and
// they run in a fresh worktree at the integration branch (each task's, each unit's). A program
// named there by a relative path (`./do-task.sh`, `scripts/run`) would be looked up in that
// worktree: in whatever the branch holds, not in the user's checkout. A script the user has not
// committed is not found (exit 127, for every task or unit), and a committed one is anybody's who
// can push to the branch, where only what the user gave is to run. So the path is made absolute
// against the folder the command was started in, once, and checked then, before anything starts.
import { accessSync, constants, statSync } from "node:fs";
import { resolve } from "node:path";
import { fail } from "../core/errors.ts";

/** A word the shell takes as it is: no quotes, expansions, globs or operators. */
const PLAIN = /^[A-Za-z0-9_./+@%,:-]+$/;

/** Which option gave the command, and who starts in `base` (for the refusals). */
export interface ExecOrigin {
  option: "--exec" | "--agent-cmd";
  starter: string;
}

/**
 * `command` with its first word, when that is a relative path (it holds a `/`), made absolute
 * against `base`; refused when no executable file is there. Any other command is left as it is:
 * a bare name is found on PATH, and a first word the shell would unquote or expand is the shell's.
 */
export function resolveExec(command: string, base: string, from: ExecOrigin): string {
  const m = /^(\s*)(\S+)([\s\S]*)$/.exec(command);
  const first = m?.[2];
  if (!m || !first || !first.includes("/") || first.startsWith("/") || !PLAIN.test(first)) return command;
  const path = resolve(base, first);
  const st = statSync(path, { throwIfNoEntry: false });
  const what = `${from.option} ${first}`;
  if (!st) fail("invalid_input", `${what}: there is no ${path} (a relative path is taken from the folder ${from.starter} starts in)`, { path });
  if (!st.isFile()) fail("invalid_input", `${what}: ${path} is not a file`, { path });
  try {
    accessSync(path, constants.X_OK);
  } catch {
    fail("invalid_input", `${what}: ${path} is not executable (chmod +x it)`, { path });
  }
  return `${m[1]}${PLAIN.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`}${m[3]}`;
}
