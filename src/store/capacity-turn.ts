// Claims of one agent that check its capacity take turns, per clone. The capacity check lists the
// tasks the agent holds, then the claim swaps one task's ref: two claims of different tasks at once
// (two sessions of one agent, parallel tool calls, a script) each found room for one more and both
// landed, past max_concurrent. A lock file per agent (an owned lock: a holder that is gone is
// broken at once) makes the check and the claim one step; a claim that does not count capacity
// (--over-capacity, a worker) does not take it. Other clones are not covered: an agent works from
// one clone, and a claim through the remote is exclusive per task whatever this lock says.
import { dirname } from "node:path";
import { fnv1a32, hex32 } from "../core/fnv.ts";
import { fail } from "../core/errors.ts";
import { acquireOwnedLock } from "../git/owned-lock.ts";
import { ownFolder } from "../git/safe-file.ts";
import type { Store } from "./store.ts";

/** How long a claim waits for another claim of the same agent (which may be pushing to the remote). */
const WAIT_MS = 60_000;

export async function capacityTurn(store: Store): Promise<{ release(): void }> {
  const agent = store.actor.agent;
  const path = `${store.repo.commonDir}/handoff/capacity-${hex32(fnv1a32(agent))}.lock`;
  const until = Date.now() + WAIT_MS;
  // A wait past a second is said (CLI): a claim that only seemed to hang read as a stuck tool.
  const onWait = store.onWait && ((m: string) => store.onWait!(`claim of ${agent}: ${m} (another claim of ${agent} is counting its capacity)`));
  // A long-running process links its lock to its owner file (no new file a claim).
  const owner = store.lockOwnerFile();
  const got = await acquireOwnedLock(path, until, onWait, undefined, owner).catch((e: NodeJS.ErrnoException) => {
    // A clone where nothing has written .git/handoff yet.
    if (e.code !== "ENOENT") throw e;
    ownFolder(dirname(path));
    return acquireOwnedLock(path, until, onWait, undefined, owner);
  });
  if (!got.ok) {
    fail("lost_race", `another claim of ${agent} is still under way (${path} held${got.owner ? ` by process ${got.owner.pid}` : ""} for ${Math.round(got.waitedMs / 1000)}s); try again`, { agent });
  }
  // A long-running process learns of refs others moved through file watches: the claim that held
  // the turn before this one moved its task's ref before it gave the turn up, so one pass of the
  // event loop delivers that change before the capacity is counted.
  if (store.warm) await new Promise((r) => setImmediate(r));
  return got;
}

/** `fn` inside the agent's capacity turn, or without one where capacity is not counted (`skip`). */
export async function inCapacityTurn<T>(store: Store, skip: boolean, fn: () => Promise<T>): Promise<T> {
  const turn = skip ? null : await capacityTurn(store);
  try {
    return await fn();
  } finally {
    turn?.release();
  }
}
