// A ref write that fails on a git lock older than git ever holds one: say so at once, with the
// fix, instead of retrying against a lock nobody will release; and one younger than that which
// held through every retry: name it and how to clear it, instead of blaming concurrent updates.
import { fail } from "../core/errors.ts";
import { shellQuote } from "../core/shell-quote.ts";
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

/**
 * After the retries gave up: when the last one failed on a lock that is still there, it held for
 * every retry, which a live git does not (it holds a ref lock for milliseconds). Say so, and how
 * to clear it, rather than blame concurrent updates. Too young to call stale (failOnStaleLock):
 * it may still be a live writer's, so the message says how to tell.
 */
export function failOnLingeringLock(commonDir: string, message: string, retriedMs: number): void {
  const lock = lockNamedIn(commonDir, message);
  // Only a lock that was there before the first try: under contention, locks come and go.
  if (!lock || lock.ageMs < retriedMs) return;
  const secs = Math.round(lock.ageMs / 1000);
  const wait = Math.max(1, Math.ceil((STALE_GIT_LOCK_MS - lock.ageMs) / 1000));
  fail(
    "lost_race",
    `the lock file ${lock.path} (${secs} s old) stayed in place through every retry: a git or git-handoff process still holds it, or one that ended (killed) left it behind`,
    { path: lock.path, lock: lock.name, age_s: secs, cause: "lingering_lock" },
    [
      { action: "wait", detail: `if a writer is still running, run the command again once it is done` },
      { action: "fix_input", detail: `if none is running: git handoff doctor --repair removes it once ${STALE_GIT_LOCK_MS / 1000} s old (in ${wait} s), or remove it by hand: rm ${shellQuote(lock.path)}` },
    ],
  );
}
