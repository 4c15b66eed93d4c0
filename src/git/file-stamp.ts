// What a file is now, without reading it, for caches of what was read from it: git and editors
// replace such files by renaming a new one over them (a new inode, even within one clock tick and
// at the same size) or rewrite them in place (a new size or modification time, kept in
// nanoseconds here). "" when there is no such file.
import { statSync } from "node:fs";

export function fileStamp(path: string): string {
  return fileStampAndTime(path).stamp;
}

/** fileStamp, and the file's modification time in ms (0 when there is no such file), from one stat. */
export function fileStampAndTime(path: string): { stamp: string; mtimeMs: number } {
  const st = statSync(path, { throwIfNoEntry: false, bigint: true });
  return st ? { stamp: `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`, mtimeMs: Number(st.mtimeNs / 1_000_000n) } : { stamp: "", mtimeMs: 0 };
}
