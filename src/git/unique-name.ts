// Names for temp files that no other writer picks: the process id, a counter and random digits.
// Not node:crypto's randomBytes: a cold one-shot command would load node:crypto for a file name
// (the files are created exclusively anyway, so a clash fails instead of sharing a file).
let count = 0;

/** A fresh `[0-9a-z_]` suffix: unique in this process by the counter, across processes by the pid. */
export function uniqueSuffix(): string {
  return `${process.pid.toString(36)}_${(count++).toString(36)}_${Math.floor(Math.random() * 36 ** 6).toString(36).padStart(6, "0")}`;
}
