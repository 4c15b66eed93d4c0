import { existsSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { sep } from "node:path";
import { fail } from "../core/errors.ts";
import { firstLine, gitSync } from "./run.ts";

/** Where a repository's pieces are, as seen from the folder a command runs in. */
export interface RepoInfo {
  /** This worktree's private git dir (HEAD, index); equals commonDir in the main worktree. */
  gitDir: string;
  /** The shared git dir: objects and every ref but HEAD and refs/worktree/*. */
  commonDir: string;
  /** This worktree's root, or null in a bare repository. */
  workTree: string | null;
  isBare: boolean;
  isLinkedWorktree: boolean;
  objectFormat: "sha1" | "sha256";
  /** The checked-out branch (short name), or null when HEAD is detached. */
  branch: string | null;
  /** True when the worktree sits under the system temp folder (likely to vanish). */
  underTempDir: boolean;
}

/** Finds the repository from any folder: main worktree, linked worktree, subfolder or bare repo. */
export function discoverRepo(cwd: string): RepoInfo {
  if (!existsSync(cwd)) fail("not_a_repo", `no such folder: ${cwd}`);
  let r;
  try {
    r = gitSync(
      ["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir", "--show-object-format", "--is-bare-repository", "--show-toplevel"],
      { cwd, inheritRepoEnv: true },
    );
  } catch (e) {
    fail("not_a_repo", `cannot run git in ${cwd}: ${(e as Error).message}`);
  }
  const lines = r.stdout.split("\n");
  if (lines.length < 4 || !lines[0]) {
    fail("not_a_repo", `not a git repository: ${cwd} (${firstLine(r.stderr) || "git rev-parse failed"})`);
  }
  const [gitDir, commonDir, format, bare, top] = lines as [string, string, string, string, string | undefined];
  const isBare = bare === "true";
  const workTree = isBare || !top ? null : top;
  return {
    gitDir,
    commonDir,
    workTree,
    isBare,
    isLinkedWorktree: gitDir !== commonDir,
    objectFormat: format === "sha256" ? "sha256" : "sha1",
    branch: readBranch(gitDir),
    underTempDir: workTree !== null && isUnder(workTree, tmpdir()),
  };
}

function readBranch(gitDir: string): string | null {
  try {
    const head = readFileSync(`${gitDir}/HEAD`, "utf8").trim();
    const m = /^ref: refs\/heads\/(.+)$/.exec(head);
    return m ? m[1]! : null;
  } catch {
    return null;
  }
}

function isUnder(path: string, dir: string): boolean {
  let real = dir;
  try {
    real = realpathSync(dir);
  } catch {
    /* keep the literal path */
  }
  return [dir, real].some((d) => path === d || path.startsWith(d.endsWith(sep) ? d : d + sep));
}
