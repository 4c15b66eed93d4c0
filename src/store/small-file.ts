// Small cache files under .git/handoff/: read whole, replaced by rename (never seen torn).
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export function readSmallFile(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** Best effort: a cache that cannot be written only makes the next read slower. */
export function writeSmallFile(path: string, text: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, text);
    renameSync(tmp, path);
  } catch {
    /* only a slower next read */
  }
}
