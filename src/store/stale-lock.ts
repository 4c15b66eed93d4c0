// A ref write that fails on a git lock older than git ever holds one: say so at once, with the
// fix, instead of retrying against a lock nobody will release.
import { fail } from "../core/errors.ts";
import { lockNamedIn, STALE_GIT_LOCK_MS } from "../git/git-locks.ts";

export function failOnStaleLock(commonDir: string, message: string): void {
  const lock = lockNamedIn(commonDir, message);
  if (!lock || lock.ageMs < STALE_GIT_LOCK_MS) return;
  const secs = Math.round(lock.ageMs / 1000);
  fail(
    "environment",
    `the git lock file ${lock.path} is stale for ${secs} s (left by a killed git process; git holds one for milliseconds): remove it with git handoff doctor --repair`,
    { path: lock.path, lock: lock.name, stale_for_s: secs, cause: "stale_lock" },
    [{ action: "fix_input", detail: `git handoff doctor --repair (removes git lock files under refs/handoff/ older than ${STALE_GIT_LOCK_MS / 1000} s)` }],
  );
}
