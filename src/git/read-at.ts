// A piece of an open file at an offset, for files kept open and read a piece at a time (a pack's
// .idx and entries, the task order file, the end of tasks.cache).
import { readSync } from "node:fs";

/** Exactly `length` bytes of `fd` at `at`, in a buffer of their own; null on a short read (past the end). */
export function readAt(fd: number, at: number, length: number): Buffer | null {
  const b = Buffer.allocUnsafe(length);
  return readSync(fd, b, 0, length, at) === length ? b : null;
}
