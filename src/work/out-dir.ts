// The folder a finished task's result files are saved to, checked before anything goes in it.
// The default folder, handoff-<id> in the worktree, is a name nobody chose: a branch the user
// checked out can hold a symbolic link of that name (handoff-t-evil -> .git), and following it
// made a result file named `config` replace .git/config, whose core.fsmonitor then ran the
// sender's command. So:
// - the default folder and every folder between the worktree's top and it are lstat'ed: a link
//   there is refused, never followed; missing folders are made one at a time (mkdir, never -p),
//   and looked at again once made;
// - a folder the user named (--out) may be a link they made, and is followed;
// - any folder inside a git dir (a `.git` part, or, links resolved, this worktree's git dir or
//   the repository's common dir) is refused, whoever named it.
// Node has no openat/renameat, so the check is by path; the files themselves are written with
// O_EXCL and renamed into the folder (results.ts), never through a link of their name.
import { lstatSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { fail } from "../core/errors.ts";

/** Where the repository keeps what no result file may land in, and where its work tree starts. */
export interface OutDirPlaces {
  workTree: string | null;
  gitDir: string;
  commonDir: string;
}

/**
 * Why result files cannot be saved to the folder `path` (absolute; null: they can). `named`: the
 * user named it (--out), so a link to a folder is followed; otherwise no part of it inside the
 * worktree may be a link. Asked before anything is written, so that a task's work is not done for
 * nothing, and again when the files are saved.
 */
export function outDirProblem(path: string, places: OutDirPlaces, named: boolean): string | null {
  const existing = nearestExisting(path);
  if (existing) {
    const what = existing === path ? "it" : existing;
    if (!named) {
      const link = linkOnTheWay(places.workTree, existing);
      if (link) return `${link === path ? "it" : link} is a symbolic link (a link is followed only for a folder named with --out)`;
    }
    try {
      if (!statSync(existing).isDirectory()) return `${what} is not a folder`;
    } catch {
      return `${what} is a symbolic link to nothing`;
    }
  }
  if (partsBelow(places.workTree, path).some((part) => part.toLowerCase() === ".git")) return "it is inside a .git folder";
  const real = existing ? join(realpathOr(existing), relative(existing, path)) : path;
  for (const dir of [places.gitDir, places.commonDir]) {
    if (within(realpathOr(dir), real)) return `it is inside the git dir ${dir}`;
  }
  return null;
}

/** Refuses (invalid_input, the one line the CLI prints) a folder outDirProblem finds a problem with. */
export function checkOutDir(path: string, places: OutDirPlaces, named: boolean): void {
  const problem = outDirProblem(path, places, named);
  if (!problem) return;
  fail("invalid_input", `cannot save result files to ${path}: ${problem}`, { path, cause: "out_dir" }, [
    { action: "fix_input", detail: "remove or rename what is in the way, or save them elsewhere: git handoff wait --id <id> --out <dir>" },
  ]);
}

/** Makes `path` ready for result files, or refuses (checkOutDir): checked, its missing folders made one by one, checked again. */
export function prepareOutDir(path: string, places: OutDirPlaces, named: boolean): void {
  checkOutDir(path, places, named);
  const missing: string[] = [];
  for (let at = path; !exists(at) && dirname(at) !== at; at = dirname(at)) missing.unshift(at);
  for (const dir of missing) {
    try {
      mkdirSync(dir);
    } catch (e) {
      // Made meanwhile: looked at below like the rest.
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
  checkOutDir(path, places, named);
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** `path` or its nearest ancestor that is there (lstat: a link counts, dangling or not); null: none. */
function nearestExisting(path: string): string | null {
  for (let at = path; ; at = dirname(at)) {
    if (exists(at)) return at;
    if (dirname(at) === at) return null;
  }
}

/** The first symbolic link among the parts of `path` below `top` (`path` included); null: none, or `path` is not under `top`. */
function linkOnTheWay(top: string | null, path: string): string | null {
  const inside = top !== null && within(realpathOr(top), path);
  // Outside the worktree (or without one) only the folder itself is this tool's to judge.
  const start = inside ? realpathOr(top) : dirname(path);
  const parts = partsBelow(start, path);
  let at = start;
  for (const part of parts) {
    at = join(at, part);
    try {
      if (lstatSync(at).isSymbolicLink()) return at;
    } catch {
      return null;
    }
  }
  return null;
}

const within = (dir: string, path: string) => {
  const r = relative(dir, path);
  return r !== ".." && !r.startsWith(`..${sep}`) && !isAbsolute(r);
};

/** The parts of `path` below `top` (all of them when it is not under `top`). */
const partsBelow = (top: string | null, path: string) => (top !== null && within(realpathOr(top), path) ? relative(realpathOr(top), path) : path).split(sep).filter(Boolean);

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
