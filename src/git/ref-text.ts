import { closeSync, openSync, readFileSync, readSync } from "node:fs";

/** A loose ref file is one line: an object id or `ref: <name>`; more than this is read in full. */
const SMALL = 256;
const buf = Buffer.alloc(SMALL);

/**
 * A ref file's text, read with one `read` into a buffer kept for it: `readFileSync` asks the size
 * first and reads again to see the end (~18 us against ~9 us here, and a claim reads about ten
 * refs). Throws as readFileSync does (ENOENT for a missing ref).
 */
export function readRefText(path: string): string {
  const fd = openSync(path, "r");
  let n: number;
  try {
    n = readSync(fd, buf, 0, SMALL, 0);
  } finally {
    closeSync(fd);
  }
  return n < SMALL ? buf.toString("latin1", 0, n) : readFileSync(path, "latin1");
}
