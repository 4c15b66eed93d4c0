// One fetch at a time per clone and remote, and the stamp that lets a waiter take the fetch that
// ran while it waited. Split out of remote.ts: it is about this clone's processes, not the remote.
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { ownFolder, touchNoFollow } from "./safe-file.ts";
import { acquireOwnedLock } from "./owned-lock.ts";
import type { RemoteFailure } from "./remote-failure.ts";

/**
 * One fetch at a time per clone and remote: concurrent fetches of the same tracking refs fail on
 * git's ref locks. A process that waited while another fetched after its request began takes that
 * fetch's result instead of fetching again (its view is at least as fresh). The lock names its
 * holder: one left by a process that is gone is broken at once; a live holder is waited on until
 * `until`, then the wait fails as a timeout.
 */
export async function withFetchLock<T extends { ok: boolean }>(
  dir: string,
  remote: string,
  until: number,
  fetch: () => Promise<T>,
  coalesced: () => Promise<T>,
  onWait?: (message: string) => void,
): Promise<T | RemoteFailure> {
  ownFolder(dir);
  const lock = join(dir, `fetch-${remote}.lock`);
  const stamp = join(dir, `fetch-${remote}.done`);
  const asked = Date.now();
  const got = await acquireOwnedLock(lock, until, onWait);
  if (!got.ok) {
    const who = got.owner ? `process ${got.owner.pid} on ${got.owner.host}` : "another process";
    return { ok: false, timedOut: true, message: `${who} held ${lock} for ${Math.round(got.waitedMs / 1000)} s` };
  }
  try {
    if (lastFetch(stamp) > asked) return await coalesced();
    const r = await fetch();
    if (r.ok) {
      touchNoFollow(stamp, new Date());
    }
    return r;
  } finally {
    got.release();
  }
}

function lastFetch(stamp: string): number {
  try {
    return lstatSync(stamp).mtimeMs;
  } catch {
    return 0;
  }
}
