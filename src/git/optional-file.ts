// Files that are often absent (a main worktree's commondir, config.worktree, the user's XDG git
// config, .handoff.yaml) are asked for with a stat that answers "none" without an error, not a
// read that throws one: a thrown ENOENT costs a cold process ~60 us (the error, its stack, its
// message), a stat ~7 us, and every cold command asked for five such files (0.3 ms). A file that is
// there is asked for with access(2), which makes no object: a stat that finds one builds a Stats
// (~1.7 KB of the young heap; a pre-edit hook asks for git's config files before it answers, and
// the young generation's first collection, ~1 ms, came before its answer).
import { existsSync, readFileSync, statSync } from "node:fs";

/** The file's text, or null when there is no such file (ENOENT, ENOTDIR); other errors throw as a read's would. */
export function readIfThere(path: string): string | null {
  try {
    // Not reachable: nothing there, or an error the stat then throws (a folder on the way that may not be searched).
    if (!existsSync(path) && !statSync(path, { throwIfNoEntry: false })) return null;
    return readFileSync(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null; // gone since the stat, or a file where a folder should be
    throw e;
  }
}
