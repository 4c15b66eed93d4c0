// The temp and home folders as node:os gives them on POSIX, read from the environment so that a
// cold command which needs nothing else of node:os does not load it (0.18 ms: the code cache's
// folder and the repository's "is this worktree under the temp folder" asked for one each).
// os.tmpdir() is $TMPDIR, $TMP, $TEMP or /tmp, without a trailing slash; os.homedir() is $HOME
// when set. On Windows, and without $HOME, node:os answers.
import { homedir, tmpdir } from "node:os";

export function tempDirOf(env: NodeJS.ProcessEnv = process.env): string {
  if (process.platform === "win32") return tmpdir();
  const path = env.TMPDIR || env.TMP || env.TEMP || "/tmp";
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

export function homeDirOf(env: NodeJS.ProcessEnv = process.env): string {
  return (process.platform !== "win32" && env.HOME) || homedir();
}
