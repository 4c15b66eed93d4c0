// Hooks write their answer with a plain write(2) on fd 1 / fd 2: the process.stdout and
// process.stderr getters build stream objects (loading net and stream code), a few ms of a hook
// that runs before every edit. A full or non-blocking pipe falls back to the stream.
import { writeSync, writevSync } from "node:fs";
import { neutralise } from "../present/untrusted.ts";

function writeFd(fd: 1 | 2, text: string): void {
  if (!text) return;
  const buf = Buffer.from(text, "utf8");
  let off = 0;
  try {
    // The first write of a process through writevSync: its first call costs ~40 us where
    // writeSync's cost ~80 (a fresh node, 540 bytes), and a hook writes its answer once. What a
    // short write leaves goes through writeSync.
    off = writevSync(fd, [buf]);
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
  } catch {
    (fd === 1 ? process.stdout : process.stderr).write(buf.subarray(off));
  }
}

export const stdout = (text: string) => writeFd(1, text);
/** Messages for a person: escaped for the terminal (they may quote shared records). */
export const stderr = (text: string) => writeFd(2, neutralise(text));
