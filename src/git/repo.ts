import { readFileSync, realpathSync as realpathJs, statSync, type Stats } from "node:fs";

// The native realpath is one system call; the JS one lstat()s every path component.
const realpathSync = (p: string): string => realpathJs.native(p);
import { tempDirOf } from "./env-dirs.ts";
import { dirname, isAbsolute, resolve, sep } from "node:path";
import { readIfThere } from "./optional-file.ts";
import { fail } from "../core/errors.ts";
import { ConfigRead, setTo, type ParsedFile } from "./config-read.ts";
import { firstLine, gitSync, runRepoApart } from "./run.ts";

/** Where a repository's pieces are, as seen from the folder a command runs in. */
export interface RepoInfo {
  /** This worktree's private git dir (HEAD, index); equals commonDir in the main worktree. */
  gitDir: string;
  /** The shared git dir: objects and every ref but HEAD and refs/worktree/*. */
  commonDir: string;
  /**
   * The git dir that holds the coordination refs and their objects: commonDir, or a separate
   * store (`<commonDir>/handoff-store.git`, separate-store.ts) that keeps them out of the user's
   * own ref namespace, so the user's `git fetch` and `git push` never list them.
   */
  storeDir: string;
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

/**
 * The process's current folder, or a clear refusal when it no longer exists (removed under a
 * shell that still stands in it): Node's own error there is a bare `ENOENT ... uv_cwd`.
 */
export function currentDir(): string {
  try {
    return process.cwd();
  } catch {
    fail("not_a_repo", "the current folder no longer exists (it was removed or renamed): cd into the repository, or give -C <dir>");
  }
}

/** `dir` as an absolute path from the current folder (currentDir's refusal when that is gone and `dir` is relative). */
export function resolveDir(dir: string): string {
  return isAbsolute(dir) ? resolve(dir) : resolve(currentDir(), dir);
}

/**
 * Finds the repository from any folder: main worktree, linked worktree, subfolder or bare repo.
 * `read`: git's config files as the caller's opening of the repository reads them (config-read.ts
 * ConfigRead), so the repository's config is read once for discovery and every question after it.
 */
export function discoverRepo(cwd: string, read: ConfigRead = new ConfigRead()): RepoInfo {
  if (!cwd) cwd = currentDir(); // empty: the current folder (refused, saying why, when it is gone)
  const st = statSync(cwd, { throwIfNoEntry: false });
  if (!st) fail("not_a_repo", `no such folder: ${cwd}`);
  if (!st.isDirectory()) fail("not_a_repo", `not a folder: ${cwd}`);
  return discoverInProcess(cwd, read, st) ?? discoverWithGit(cwd);
}

/**
 * The common layouts (a worktree with a `.git` folder, or a linked worktree with a `.git` file) are
 * found by reading a few files, saving a git spawn on every call. Anything unusual (GIT_DIR and
 * friends in the environment, core.worktree, bare repos, ceiling dirs, a safe.directory question)
 * is left to `git rev-parse`, which knows every rule.
 */
function discoverInProcess(start: string, read: ConfigRead, startStat: Stats): RepoInfo | null {
  const env = process.env;
  if (env.GIT_DIR || env.GIT_WORK_TREE || env.GIT_COMMON_DIR || env.GIT_CEILING_DIRECTORIES || env.GIT_DISCOVERY_ACROSS_FILESYSTEM) return null;
  let dir: string;
  try {
    dir = realpathSync(start);
  } catch {
    return null;
  }
  // The folder started in, stat'd already (discoverRepo): its owner is asked of that stat.
  const first = dir;
  for (;;) {
    const dotGit = `${dir}/.git`;
    let st;
    try {
      // A subfolder's missing .git answered without a thrown error (~60 us each in a cold process).
      st = statSync(dotGit, { throwIfNoEntry: false }) ?? null;
    } catch {
      st = null;
    }
    if (st) {
      let gitDir: string;
      if (st.isDirectory()) gitDir = dotGit;
      else {
        const m = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, "utf8"));
        if (!m) return null;
        const named = resolve(dir, m[1]!.trim());
        try {
          gitDir = realpathSync(named);
        } catch {
          // A linked worktree whose main repository was moved or removed: git refuses it too.
          fail("not_a_repo", `not a git repository: ${dotGit} names ${named}, which does not exist (was the main repository moved?)`, undefined, [
            { action: "fix_input", detail: `in the main repository, run: git worktree repair ${dir}` },
          ]);
        }
      }
      let commonDir = gitDir;
      try {
        // The main worktree has no commondir file.
        const common = readIfThere(`${gitDir}/commondir`);
        if (common !== null) commonDir = realpathSync(resolve(gitDir, common.trim()));
      } catch {
        /* unreadable: taken as the main worktree, as before */
      }
      // git refuses a repository (safe.directory aside) when the work tree's top folder, a `.git`
      // file or the git dir is another user's: any of them, not only the common dir, sends the
      // question to git. Asked first: only this user's repository keeps git's config files as its
      // last opening read them for this one (config-memo.ts), its own and this user's alike.
      let owned: boolean;
      try {
        owned = ownedByUs(st, dir === first ? startStat : dir, ...(gitDir === dotGit ? [] : [gitDir]), ...(commonDir === gitDir ? [] : [commonDir]));
      } catch {
        return null; // a folder gone meanwhile: git says why
      }
      if (!owned) return null;
      read.useMemo(commonDir);
      const config = read.file(`${commonDir}/config`)?.text;
      if (config == null) return null; // none, or unreadable: git says why
      // Settings that change where the work tree is, or who may use the repo: ask git.
      const { elsewhere, sha256 } = discoveryFlags(config, read.plain(`${commonDir}/config`));
      if (elsewhere) return null;
      return {
        gitDir,
        commonDir,
        storeDir: storeDirOf(commonDir),
        workTree: dir,
        isBare: false,
        isLinkedWorktree: gitDir !== commonDir,
        objectFormat: sha256 ? "sha256" : "sha1",
        branch: readBranch(gitDir),
        underTempDir: isUnder(dir, tempDirOf()),
      };
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * What discovery asks of the repository's config: whether it says the work tree is elsewhere or
 * the repository bare (git is asked then), and whether objects are sha256. Of the parse the
 * opening reads the file with anyway (config-read.ts ConfigRead.plain) where it can answer as the
 * patterns did, else of the text with them (a cold process compiles each pattern, ~50 us apiece).
 */
export function discoveryFlags(text: string, parsed: ParsedFile | null): { elsewhere: boolean; sha256: boolean } {
  const bare = parsed ? setTo(parsed, "bare", "true") : undefined;
  const elsewhere = bare !== undefined ? bare || parsed!.entries.some((e) => e.key.startsWith("worktree")) : /^\s*(worktree|bare\s*=\s*true)/im.test(text);
  const sha = parsed ? setTo(parsed, "objectformat", "sha256") : undefined;
  return { elsewhere, sha256: sha !== undefined ? sha : /^\s*objectformat\s*=\s*sha256/im.test(text) };
}

/** Whether this process's user owns every one of `paths` (an already taken stat stands for its path). */
function ownedByUs(...paths: (string | Stats)[]): boolean {
  const uid = process.getuid?.();
  return paths.every((p) => (typeof p === "string" ? statSync(p) : p).uid === uid);
}

function discoverWithGit(cwd: string): RepoInfo {
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
    const why = firstLine(r.stderr) || "git rev-parse failed";
    // git refuses a repository another user owns (safe.directory) and says how to allow it.
    const owner = /dubious ownership in repository at '([^']+)'/.exec(r.stderr)?.[1];
    const suggestions = owner ? [{ action: "fix_input" as const, detail: `if you trust it: git config --global --add safe.directory ${owner}` }] : undefined;
    fail("not_a_repo", `not a git repository: ${cwd} (${why})`, undefined, suggestions);
  }
  const [gitDir, commonDir, format, bare, top] = lines as [string, string, string, string, string | undefined];
  const isBare = bare === "true";
  const workTree = isBare || !top ? null : top;
  if (workTree && !foundFrom(workTree, gitDir)) runRepoApart(workTree, gitDir);
  return {
    gitDir,
    commonDir,
    storeDir: storeDirOf(commonDir),
    workTree,
    isBare,
    isLinkedWorktree: gitDir !== commonDir,
    objectFormat: format === "sha256" ? "sha256" : "sha1",
    branch: readBranch(gitDir),
    underTempDir: workTree !== null && isUnder(workTree, tempDirOf()),
  };
}

/**
 * Whether git, started in `workTree` with no GIT_DIR, finds `gitDir` there: a `.git` folder that is
 * it, or a `.git` file naming it. Not so when GIT_DIR and GIT_WORK_TREE put them apart.
 */
function foundFrom(workTree: string, gitDir: string): boolean {
  const dotGit = `${workTree}/.git`;
  try {
    if (statSync(dotGit).isDirectory()) return realpathSync(dotGit) === realpathSync(gitDir);
    const m = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, "utf8"));
    return m !== null && realpathSync(resolve(workTree, m[1]!.trim())) === realpathSync(gitDir);
  } catch {
    return false;
  }
}

/** Where a separate store lives under a repository's common git dir. */
export const SEPARATE_STORE = "handoff-store.git";

/** Whether a separate store is there now: its HEAD, written last when it was made. One stat. */
export function hasSeparateStore(commonDir: string): boolean {
  try {
    return statSync(`${commonDir}/${SEPARATE_STORE}/HEAD`, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false; // a file where a folder must be (ENOTDIR): no store there
  }
}

/** The separate store when one is there, else the common dir. */
export function storeDirOf(commonDir: string): string {
  return hasSeparateStore(commonDir) ? `${commonDir}/${SEPARATE_STORE}` : commonDir;
}

function readBranch(gitDir: string): string | null {
  let head: string;
  try {
    head = readFileSync(`${gitDir}/HEAD`, "utf8").trim();
  } catch {
    return null;
  }
  // As /^ref: refs\/heads\/(.+)$/ read it, without a pattern for a cold process to compile: a name of one line.
  const prefix = "ref: refs/heads/";
  const name = head.startsWith(prefix) ? head.slice(prefix.length) : "";
  return name && !["\n", "\r", "\u2028", "\u2029"].some((c) => name.includes(c)) ? name : null;
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
