import { closeSync, openSync, readFileSync, readSync } from "node:fs";

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
