// Small cache files under .git/handoff/: read whole, replaced by rename (never seen torn), never
// through a symbolic link (git/safe-file.ts).
import { closeSync, openSync, renameSync, writeFileSync, writevSync } from "node:fs";
import { dirname } from "node:path";
import { ownFolder, readTextNoFollow, tempBeside, unlinkQuiet } from "../git/safe-file.ts";

export { replaceFile, tempBeside, unlinkQuiet } from "../git/safe-file.ts";

/** The file's text, or null: none, a link (never followed), anything unreadable. */
export function readSmallFile(path: string): string | null {
  return readTextNoFollow(path);
}

/**
 * Best effort: a cache that cannot be written only makes the next read slower. The old file goes
 * before the new one is renamed into place: renaming over an existing file makes ext4 allocate the
 * new file's blocks and start writing them inside the rename (its auto_da_alloc safeguard for files
 * replaced by rename), 0.5 ms a write against 0.1 ms onto a free name on this machine's disk. A
 * reader in between finds no cache, as before the first write, and reads git.
 */
export function writeSmallFile(path: string, text: string | Uint8Array | readonly Uint8Array[]): void {
  const tmp = tempBeside(path);
  try {
    // One lstat, where a mkdir -p (a mkdir and a stat) made sure of the folder before.
    ownFolder(dirname(path));
    if (Array.isArray(text)) writePieces(tmp, text);
    else writeFileSync(tmp, text as string | Uint8Array, { flag: "wx" });
    replaceByRename(tmp, path);
  } catch {
    unlinkQuiet(tmp); // only a slower next read; no half-written temp left behind
  }
}

/** `tmp` renamed to `path`, the old `path` removed first (see writeSmallFile); throws on failure. */
export function replaceByRename(tmp: string, path: string): void {
  unlinkQuiet(path);
  renameSync(tmp, path);
}

/** Writes `pieces` one after the other into a new file, without joining them first. */
function writePieces(path: string, pieces: readonly Uint8Array[]): void {
  const fd = openSync(path, "wx");
  try {
    // writev takes at most IOV_MAX (1,024) buffers a call, and may write less than asked.
    for (let i = 0; i < pieces.length; ) {
      const batch = pieces.slice(i, i + 1024);
      let want = 0;
      for (const p of batch) want += p.length;
      const wrote = writevSync(fd, batch);
      if (wrote === want) {
        i += batch.length;
        continue;
      }
      // A short write: the piece it stopped in is finished with a plain write, then on as before.
      let left = wrote;
      let k = i;
      while (left >= pieces[k]!.length) left -= pieces[k++]!.length;
      writeFileSync(fd, pieces[k]!.subarray(left));
      i = k + 1;
    }
  } finally {
    closeSync(fd);
  }
}
