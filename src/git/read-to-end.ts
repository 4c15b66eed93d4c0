// A descriptor read to its end within a bound: an input handed over by an agent or a person (a
// hook's payload on stdin, a file given to `doc put`) stops being read once past the bound, never
// read whole into memory first.
import { readSync } from "node:fs";

/**
 * `fd` to its end: `tooLong()` (it throws) once past `max` bytes; `again()` when a non-blocking
 * descriptor has nothing yet (it waits, or throws past a deadline). Other read errors are thrown.
 */
export function readToEnd(fd: number, max: number, again: () => void, tooLong: () => never): Buffer {
  const buf = Buffer.allocUnsafe(Math.min(max + 1, 64 * 1024));
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EAGAIN") throw e;
      again();
      continue;
    }
    if (n === 0) break;
    size += n;
    if (size > max) tooLong();
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks, size);
}
