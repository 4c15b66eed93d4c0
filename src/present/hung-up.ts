// A write to a terminal that hung up (its window closed, the ssh connection dropped) fails with
// EIO, as one to a failing disk may: the fd's kind tells them apart. Asked with fstat, since
// isatty already says no once the terminal is gone.
import { fstatSync } from "node:fs";

/** Whether an EIO on `fd` is a hung-up terminal's (the fd is a character device), not a failing write. */
export function hungUp(fd: number): boolean {
  try {
    return fstatSync(fd).isCharacterDevice();
  } catch {
    return false;
  }
}
