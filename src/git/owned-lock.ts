// Our own lock files (under .git/handoff/): each says who holds it (pid, host and the process's
// start time), so a lock left by a process that is gone is broken at once instead of by age,
// and a reused pid is not mistaken for the holder.
import { uniqueSuffix } from "./unique-name.ts";
import { closeSync, linkSync, lstatSync, openSync, readSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { readTextNoFollow } from "./safe-file.ts";
import { thisHost } from "./host-name.ts";

export interface LockOwner {
  pid: number;
  host: string;
  /** Start time of the process in clock ticks since boot (/proc/<pid>/stat), when known. */
  start: string | null;
}

/**
 * A lock without an owner record is stale after this long. Locks are put in place with their
 * owner (placeLock), so only an older build makes one, and holds it so for microseconds: the gap
 * between creating the file and writing its owner, where a kill left it for good.
 */
export const ANONYMOUS_STALE_MS = 5_000;
/** A live holder is waited on silently this long, then the waiter says what it waits for. */
const QUIET_WAIT_MS = 1000;

/** The start time of a process, which tells it apart from a later process given the same pid. */
export function processStart(pid: number): string | null {
  let fd = -1;
  try {
    // One read into a buffer kept for it: readFileSync of a file whose size reads 0 (as /proc's
    // do) reads into large chunks and joins them, a tenth of a millisecond of a cold claim's
    // capacity turn. A stat line is a few hundred bytes.
    fd = openSync(`/proc/${pid}/stat`, "r");
    statBuf ??= Buffer.allocUnsafe(4096);
    const n = readSync(fd, statBuf, 0, statBuf.length, 0);
    const stat = statBuf.toString("latin1", 0, n);
    return n < statBuf.length ? (stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null) : null;
  } catch {
    return null;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}
let statBuf: Buffer | undefined;

export function selfOwner(): LockOwner {
  return { pid: process.pid, host: thisHost(), start: processStart(process.pid) };
}

export function readOwner(path: string): LockOwner | null {
  try {
    // Never through a link (safe-file.ts): one in a lock's place records no owner, and ages out.
    const o = JSON.parse(readTextNoFollow(path) ?? "null") as Partial<LockOwner>;
    return typeof o.pid === "number" && typeof o.host === "string" ? { pid: o.pid, host: o.host, start: typeof o.start === "string" ? o.start : null } : null;
  } catch {
    return null;
  }
}

/** Whether the holder is known to be gone: only answerable for a process of this host. */
export function holderGone(owner: LockOwner): boolean {
  if (owner.host !== thisHost()) return false;
  try {
    process.kill(owner.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ESRCH") return true;
  }
  const start = processStart(owner.pid);
  return owner.start !== null && start !== null && start !== owner.start;
}

/** `contended`: the lock was held by another when first tried (what the holder did meanwhile may matter). */
export type Acquired = { ok: true; release(): void; contended: boolean } | { ok: false; owner: LockOwner | null; waitedMs: number };

/**
 * A file of this process's own holding its owner record (write-turn.ts keeps one per long-running
 * process), and its inode: a lock may be a hard link to it.
 */
export interface OwnerFile {
  path: string;
  ino: number;
}

/**
 * Takes the lock at `path`, waiting for a live holder until `until` (epoch ms) or `signal` is
 * aborted. A holder that is gone is broken at once; `onWait` is told once, after a second, who is
 * being waited for. With `ownerFile`, the lock is a hard link to it: no new file (on a busy ext4,
 * creating one is most of a lock's cost: a warm MCP claim, which takes the capacity turn, spent
 * ~1 ms on it), and given back by its inode.
 */
export async function acquireOwnedLock(path: string, until: number, onWait?: (message: string) => void, signal?: AbortSignal, ownerFile?: OwnerFile | null): Promise<Acquired> {
  const started = Date.now();
  let told = false;
  for (let n = 0; ; n++) {
    const placed = (ownerFile && linkOwner(path, ownerFile)) ?? placeLock(path);
    if (placed === "linked") return { ok: true, release: () => unlinkIfSame(path, ownerFile!.ino), contended: n > 0 };
    if (placed) return { ok: true, release: () => release(path), contended: n > 0 };
    const owner = readOwner(path);
    if (isStale(path, owner, ANONYMOUS_STALE_MS)) {
      breakLock(path, owner);
      continue;
    }
    const waited = Date.now() - started;
    if (Date.now() >= until || signal?.aborted) return { ok: false, owner, waitedMs: waited };
    if (!told && waited >= QUIET_WAIT_MS && onWait) {
      told = true;
      onWait(owner ? `waiting for process ${owner.pid} on ${owner.host}, which holds ${path}` : `waiting for ${path} (no owner recorded)`);
    }
    await new Promise((r) => setTimeout(r, Math.min(Math.max(1, until - Date.now()), 5 + Math.random() * Math.min(50, 5 * (n + 1)))));
  }
}

/**
 * One try at the lock, no waiting: its release, or null while a live process holds it. A holder
 * that is gone is broken at once, as acquireOwnedLock does; `anonymousStaleMs` is how long a lock
 * without an owner record (an older build's: an empty file) is taken for a live holder's, for
 * locks an older build held for as long as its work took.
 */
export function tryOwnedLock(path: string, anonymousStaleMs = ANONYMOUS_STALE_MS): (() => void) | null {
  for (let n = 0; n < 3; n++) {
    if (placeLock(path)) return () => release(path);
    const owner = readOwner(path);
    if (!isStale(path, owner, anonymousStaleMs)) {
      if (mtime(path) === null) continue; // released meanwhile: try again
      return null;
    }
    breakLock(path, owner);
  }
  return null;
}

function isStale(path: string, owner: LockOwner | null, anonymousStaleMs: number): boolean {
  if (owner) return holderGone(owner);
  const age = mtime(path);
  return age !== null && Date.now() - age > anonymousStaleMs;
}

/** What link(2) answers where a file system has no hard links. */
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV"]);

/**
 * Creates the lock with its owner record in one step, or returns false when it exists: the record
 * is written to a file of its own first and linked to the lock's name (as exclusive as an O_EXCL
 * create), so a process killed at any point leaves no lock without its owner, which only age
 * could break. A kill before the link leaves only the record's file (`<lock>.new-<pid>-...`,
 * removed by doctor --repair once its process is gone).
 */
function placeLock(path: string): boolean {
  const temp = `${path}.new-${process.pid}-${uniqueSuffix()}`;
  const record = JSON.stringify(selfOwner());
  const fd = openSync(temp, "wx");
  try {
    try {
      writeSync(fd, record);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temp, path);
    } catch (e) {
      // A file system without hard links: create the lock and write its owner, as before.
      if (!NO_LINKS.has((e as NodeJS.ErrnoException).code ?? "")) throw e;
      const lock = openSync(path, "wx");
      try {
        writeSync(lock, record);
      } finally {
        closeSync(lock);
      }
    }
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    return false;
  } finally {
    try {
      unlinkSync(temp);
    } catch {
      /* gone */
    }
  }
}

/**
 * The lock as a link to this process's owner file: "linked", false when the lock is held, or null
 * when no link could be made (the owner file gone, a file system without hard links): the caller
 * then places a lock of its own.
 */
function linkOwner(path: string, owner: OwnerFile): "linked" | false | null {
  try {
    linkSync(owner.path, path);
    return "linked";
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EEXIST" ? false : null;
  }
}

/** Removes the lock if it is still the inode this process placed (broken and retaken, the new holder keeps it). */
export function unlinkIfSame(path: string, ino: number): void {
  try {
    if (lstatSync(path).ino === ino) unlinkSync(path);
  } catch {
    /* already gone */
  }
}

function release(path: string): void {
  // Only our own lock: if it was broken and retaken meanwhile, the new holder keeps it.
  const o = readOwner(path);
  if (o && (o.pid !== process.pid || o.host !== thisHost())) return;
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}

/**
 * Removes a stale lock without removing a fresh one another process took in the meantime: the
 * lock is moved aside first, and put back if what was moved is not the stale holder's.
 */
function breakLock(path: string, stale: LockOwner | null): void {
  const aside = `${path}.broken-${uniqueSuffix()}`;
  try {
    renameSync(path, aside);
  } catch {
    return; // someone else broke it first
  }
  const moved = readOwner(aside);
  const same = stale === null ? moved === null : moved !== null && moved.pid === stale.pid && moved.host === stale.host && moved.start === stale.start;
  if (!same) {
    try {
      linkSync(aside, path);
    } catch {
      /* a newer lock is in place: the one we moved was superseded anyway */
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    /* gone */
  }
}

function mtime(path: string): number | null {
  try {
    return lstatSync(path).mtimeMs;
  } catch {
    return null;
  }
}
