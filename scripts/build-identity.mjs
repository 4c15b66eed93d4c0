// Which build `npm run build` makes: the package version and, when the folder is a git checkout of
// git-handoff itself, the commit it was built from (12 hex digits) and whether tracked files differ
// from it (`git describe --dirty`'s rule: untracked files do not count). Anywhere else (an unpacked
// npm tarball, a copy, a folder inside some other repository) the version alone. Read here, once,
// and put into the bundles as constants (src/core/build-identity.ts): a command asks git nothing.
import { spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";

/** The environment git gets: without the variables that would point it at another repository. */
function gitEnv() {
  const env = { ...process.env };
  for (const k of ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_CEILING_DIRECTORIES"]) delete env[k];
  return env;
}

export function buildIdentity(root, version) {
  const env = gitEnv();
  // --no-optional-locks: status refreshes the index only if it can without a lock, so a build
  // never fails or waits over a git command running in the same checkout.
  const git = (...args) => {
    const r = spawnSync("git", ["--no-optional-locks", "-C", root, ...args], { encoding: "utf8", env });
    return r.status === 0 ? r.stdout.trim() : null;
  };
  const plain = { version, commit: null, dirty: false };
  const top = git("rev-parse", "--show-toplevel");
  if (!top || realpathSync(top) !== realpathSync(root)) return plain;
  const commit = git("rev-parse", "--short=12", "--verify", "--quiet", "HEAD");
  if (!commit) return plain;
  const status = git("status", "--porcelain", "--untracked-files=no");
  return { version, commit, dirty: status === null || status !== "" };
}
