// A file (or standard input, `-`) a person names as a command's input, read up to a bound: a
// whole-file read of /dev/zero or of a huge pipe grew to gigabytes before the record's own size
// check could refuse it (`doc put x /dev/zero`, `memory add --file -`).
import { closeSync, openSync, readSync } from "node:fs";
import { fail } from "../core/errors.ts";

const nap = new Int32Array(new SharedArrayBuffer(4));

/** At most `max` bytes of `file`; more is refused in one line: `what` is too long, `limit`. */
export function readBoundedInput(file: string, max: number, what: string, limit: string): Buffer {
  let fd: number;
  try {
    fd = file === "-" ? 0 : openSync(file, "r");
  } catch (e) {
    fail("invalid_input", `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const buf = Buffer.allocUnsafe(Math.min(max + 1, 1 << 16));
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch (e) {
        // A non-blocking pipe with nothing yet: wait for the writer.
        if ((e as NodeJS.ErrnoException).code === "EAGAIN") {
          Atomics.wait(nap, 0, 0, 5);
          continue;
        }
        fail("invalid_input", `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
      if (n === 0) break;
      total += n;
      if (total > max) fail("invalid_input", `${what} ${file === "-" ? "from standard input" : `in ${file}`} is too long: ${limit}`, { max });
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
  } finally {
    if (fd !== 0) closeSync(fd);
  }
  return Buffer.concat(chunks, total);
}
