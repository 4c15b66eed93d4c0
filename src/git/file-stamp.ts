// What a file is now, without reading it, for caches of what was read from it: git and editors
// replace such files by renaming a new one over them (a new inode, even within one clock tick and
// at the same size) or rewrite them in place (a new size or modification time, kept in
// nanoseconds here). "" when there is no such file.
import { statSync } from "node:fs";

export function fileStamp(path: string): string {
  const st = statSync(path, { throwIfNoEntry: false, bigint: true });
  return st ? `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` : "";
}
