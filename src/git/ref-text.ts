import { closeSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import { READ_NOFOLLOW, READ_NOFOLLOW_FLAG } from "./safe-file.ts";

/** A loose ref file is one line: an object id or `ref: <name>`; more than this is read in full. */
const SMALL = 256;
const buf = Buffer.alloc(SMALL);

/**
 * Reads a process makes before it takes the warm path below. A cold process runs this in V8's
 * interpreter, where `readFileSync(path, "utf8")` (one native call: open, read, close) costs 8 us a
 * ref against 15 us for three fs calls through their JS checks (a one-shot claim's capacity check
 * reads every loose task ref, up to 256); once the code is warm, one pread into a kept buffer is
 * the cheaper (1.5 us against 2.4: readFileSync reads a second time to see the end).
 */
const COLD_READS = 512;
let reads = 0;

/** A ref file's text. Throws as readFileSync does (ENOENT for a missing ref). */
export function readRefText(path: string): string {
  if (reads < COLD_READS) {
    reads++;
    return readFileSync(path, "utf8");
  }
  const fd = openSync(path, "r");
  let n: number;
  try {
    n = readSync(fd, buf, 0, SMALL, 0);
  } finally {
    closeSync(fd);
  }
  return n < SMALL ? buf.toString("latin1", 0, n) : readFileSync(path, "latin1");
}


/**
 * A file a folder's plain listing named, read as readRefText reads a ref, but never through a
 * link (ELOOP) nor waiting on a FIFO (read as empty, or EAGAIN while a writer holds it): a folder
 * throws EISDIR. A listing with file types, which told those apart before any read, cost the
 * process's first listing ~0.1 ms (Node's Dirent code, run once).
 */
export function readListedRefText(path: string): string {
  if (reads < COLD_READS) {
    reads++;
    return readFileSync(path, { encoding: "utf8", flag: READ_NOFOLLOW_FLAG });
  }
  const fd = openSync(path, READ_NOFOLLOW);
  try {
    const n = readSync(fd, buf, 0, SMALL, 0);
    // Longer than any ref: read whole, if a file (a device's bytes might never end).
    return n < SMALL ? buf.toString("latin1", 0, n) : fstatSync(fd).isFile() ? readFileSync(fd, "latin1") : "";
  } finally {
    closeSync(fd);
  }
}
