// git's own `.lock` files record no writer. git holds one for milliseconds (a ref update) or a
// few seconds at most (rewriting packed-refs); one much older was left by a killed git process,
// and every later write of that ref fails on it forever. Only age can tell.
import { statSync, unlinkSync } from "node:fs";
import { join, relative } from "node:path";
import { walkFiles } from "./file-walk.ts";

/** A git lock older than this is taken as left behind by a killed process. */
export const STALE_GIT_LOCK_MS = 30_000;

export interface GitLock {
  /** Absolute path of the lock file. */
  path: string;
  /** Its path inside the common git dir, e.g. `refs/handoff/files.lock`. */
  name: string;
  ageMs: number;
}

function lockAt(commonDir: string, path: string, now: number): GitLock | null {
  try {
    return { path, name: relative(commonDir, path), ageMs: Math.max(0, now - statSync(path).mtimeMs) };
  } catch {
    return null;
  }
}

/** The lock a failed `update-ref` names in its message ("Unable to create '<path>.lock': File exists"). */
export function lockNamedIn(commonDir: string, message: string, now = Date.now()): GitLock | null {
  const m = /'([^']+\.lock)'/.exec(message);
  return m ? lockAt(commonDir, m[1]!, now) : null;
}

/** git lock files under the coordination namespaces, plus packed-refs.lock, with their age. */
export function coordinationLocks(commonDir: string, now = Date.now()): GitLock[] {
  const found: GitLock[] = [];
  for (const ns of ["refs/handoff", "refs/handoff-remotes", "refs/handoff-local"]) {
    walkFiles(join(commonDir, ns), (path, name) => {
      const l = name.endsWith(".lock") ? lockAt(commonDir, path, now) : null;
      if (l) found.push(l);
    });
  }
  const packed = lockAt(commonDir, join(commonDir, "packed-refs.lock"), now);
  if (packed) found.push(packed);
  return found;
}

/** Removes a lock only if it is (still) past the stale age: never one a live git just took. */
export function removeStaleLock(lock: GitLock, now = Date.now()): boolean {
  const fresh = lockAt("", lock.path, now);
  if (!fresh || fresh.ageMs < STALE_GIT_LOCK_MS) return false;
  try {
    unlinkSync(lock.path);
    return true;
  } catch {
    return false;
  }
}
