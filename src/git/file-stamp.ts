// What a file is now, without reading it, for caches of what was read from it: git and editors
// replace such files by renaming a new one over them (a new inode, even within one clock tick and
// at the same size) or rewrite them in place (a new size or modification time). "" when there is
// no such file.
// The times are the number stat's milliseconds, whose fraction keeps them to a quarter of a
// microsecond at today's dates: finer than the kernel's clock tick for file times, so whatever
// nanoseconds told apart these tell apart too. A bigint stat (nanoseconds as integers) cost a cold
// process ~10 us a call more and its BigIntStats compiled at the first: ~8 of them before a hook
// answered. Kept on disk in the config memo and policy.cache: each bumped its version with this
// form (config-memo.ts VERSION, repo-policy.ts POLICY_CACHE_VERSION).
import { statSync, type Stats } from "node:fs";

export function fileStamp(path: string): string {
  return fileStampAndTime(path).stamp;
}

/** fileStamp, and the file's modification time in ms (0 when there is no such file), from one stat. */
export function fileStampAndTime(path: string): { stamp: string; mtimeMs: number } {
  const st = statSync(path, { throwIfNoEntry: false });
  return st ? { stamp: stampOfStats(st, path), mtimeMs: st.mtimeMs } : { stamp: "", mtimeMs: 0 };
}

/**
 * The stamp of a stat of `path` already made: inode, size, and modification and change times in
 * ms with their fraction. A number stat's inode is a double: past 2^53 (Lustre's, some NFS
 * servers', NTFS's file ids) neighbouring inodes read alike, and a file renamed over another
 * within one tick of the clock, at the same size, would keep its stamp. Such a file is stamped
 * from a bigint stat, in nanoseconds, as every file was.
 */
export function stampOfStats(st: Stats, path: string): string {
  if (st.ino <= Number.MAX_SAFE_INTEGER) return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  const big = statSync(path, { throwIfNoEntry: false, bigint: true });
  return big ? `${big.ino}:${big.size}:${big.mtimeNs}:${big.ctimeNs}` : "";
}
