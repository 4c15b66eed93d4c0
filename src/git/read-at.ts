// A piece of an open file at an offset, for files kept open and read a piece at a time (a pack's
// .idx and entries, the task order file, the end of tasks.cache).
import { readSync } from "node:fs";

/** Exactly `length` bytes of `fd` at `at`, in a buffer of their own; null on a short read (past the end). */
export function readAt(fd: number, at: number, length: number): Buffer | null {
  const b = Buffer.allocUnsafe(length);
  return readSync(fd, b, 0, length, at) === length ? b : null;
}

/**
 * readAt in a buffer of its own, never a slice of Node's pool: the pool's allocation code
 * (`Buffer.allocUnsafe`) is compiled at its first call, ~30-40 us in a cold process, which the
 * pre-edit hook's few reads before its answer (the config memo, the lease cache) need not pay. Not
 * for many small reads (a pack's entries), where the pool saves an ArrayBuffer each.
 */
export function readAtUnpooled(fd: number, at: number, length: number): Buffer | null {
  const b = Buffer.allocUnsafeSlow(length);
  return readSync(fd, b, 0, length, at) === length ? b : null;
}
