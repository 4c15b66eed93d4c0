// Random bytes for new ids (tasks, handed-over tasks) without node:crypto: `wait` and `task add`
// would load it for eight bytes before their first push, about 5 ms of a cold command. Read from
// the kernel's /dev/urandom, the source node:crypto draws on too; elsewhere, node:crypto.
import { closeSync, openSync, readSync } from "node:fs";
import { randomBytes } from "node:crypto";

export function freshBytes(n: number): Buffer {
  const out = Buffer.alloc(n);
  let fd: number | null = null;
  try {
    fd = openSync("/dev/urandom", "r");
    let got = 0;
    while (got < n) {
      const r = readSync(fd, out, got, n - got, null);
      if (r <= 0) throw new Error("short read");
      got += r;
    }
    return out;
  } catch {
    return randomBytes(n);
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
