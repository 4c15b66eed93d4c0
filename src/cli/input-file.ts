// A file (or standard input, `-`) a person names as a command's input, read up to a bound: a
// whole-file read of /dev/zero or of a huge pipe grew to gigabytes before the record's own size
// check could refuse it (`doc put x /dev/zero`, `memory add --file -`).
import { closeSync, openSync } from "node:fs";
import { fail, HandoffError } from "../core/errors.ts";
import { readToEnd } from "../git/read-to-end.ts";

const nap = new Int32Array(new SharedArrayBuffer(4));

/** At most `max` bytes of `file`; more is refused in one line: `what` is too long, `limit`. */
export function readBoundedInput(file: string, max: number, what: string, limit: string): Buffer {
  const cannot = (e: unknown): never => fail("invalid_input", `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  let fd: number;
  try {
    fd = file === "-" ? 0 : openSync(file, "r");
  } catch (e) {
    return cannot(e);
  }
  try {
    // A non-blocking pipe with nothing yet: wait for the writer.
    return readToEnd(fd, max, () => Atomics.wait(nap, 0, 0, 5), () => fail("invalid_input", `${what} ${file === "-" ? "from standard input" : `in ${file}`} is too long: ${limit}`, { max }));
  } catch (e) {
    if (e instanceof HandoffError) throw e;
    return cannot(e);
  } finally {
    if (fd !== 0) closeSync(fd);
  }
}
