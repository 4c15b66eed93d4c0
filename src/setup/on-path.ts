// Whether the commands the installed hooks run by name are on the PATH. The git hooks run
// `git-handoff`, the agents' hook configs and the git pre-commit hook `git-handoff-hook`; where
// one is not found, what its hooks check goes unchecked ("not on PATH, file leases not checked"),
// so `init` says which when it installs them and `doctor` checks it.
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { Action } from "./hook-install.ts";

/** How to put both on the PATH: the package is not on the npm registry, so from a checkout. */
export const PUT_ON_PATH =
  "run npm link in the git-handoff checkout (it puts git-handoff and git-handoff-hook on the PATH), or link its dist/git-handoff.cjs as git-handoff and git-hooks/fast-hook.sh as git-handoff-hook into a folder on the PATH";

/** The executable file `bin` in a folder of PATH, or null (an empty entry, the current folder, is not looked in: it is wherever a hook runs). */
export function findOnPath(bin: string, env: NodeJS.ProcessEnv = process.env): string | null {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, bin);
    if (isExecutableFile(path)) return path;
  }
  return null;
}

export function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * What goes unchecked while a command is missing. The agents' pre-edit hooks and git's pre-commit
 * run git-handoff-hook (pre-commit falls back to git-handoff); pre-push and the agents'
 * session-start hooks run git-handoff.
 */
const UNCHECKED: Record<string, string> = {
  both: "the hooks let every edit, commit and push through until they are",
  "git-handoff-hook": "the agents' pre-edit hook commands fail and their edits go unchecked until it is (git's pre-commit hook falls back to git-handoff, slower)",
  "git-handoff": "the pre-push hook lets every push through and the agents' session-start hooks fail until it is (edits and commits are checked through git-handoff-hook)",
};

/** A note asking for the commands the hooks need, when some are not on the PATH; none when all are. */
export function pathNotes(root: string, env: NodeJS.ProcessEnv = process.env): Action[] {
  const missing = ["git-handoff", "git-handoff-hook"].filter((bin) => !findOnPath(bin, env));
  if (!missing.length) return [];
  const which = missing.length > 1 ? `${missing.join(" and ")} are` : `${missing[0]} is`;
  const unchecked = UNCHECKED[missing.length > 1 ? "both" : missing[0]!];
  return [{ op: "note", path: root, needsYou: true, detail: `${which} not on the PATH: ${unchecked}. To fix: ${PUT_ON_PATH}; git handoff doctor checks it` }];
}
