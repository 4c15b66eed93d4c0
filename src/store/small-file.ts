// Small cache files under .git/handoff/: read whole, replaced by rename (never seen torn).
import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { uniqueSuffix } from "../git/unique-name.ts";

/** A temporary file's name beside `path`, this process's own. */
const tempBeside = (path: string) => `${path}.${process.pid}-${uniqueSuffix()}.tmp`;

/** Writes `text` to a temporary file beside `path` and renames it over `path`; throws on failure. */
export function replaceFile(path: string, text: string): void {
  const tmp = tempBeside(path);
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

export function readSmallFile(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/**
 * Best effort: a cache that cannot be written only makes the next read slower. The old file goes
 * before the new one is renamed into place: renaming over an existing file makes ext4 allocate the
 * new file's blocks and start writing them inside the rename (its auto_da_alloc safeguard for files
 * replaced by rename), 0.5 ms a write against 0.1 ms onto a free name on this machine's disk. A
 * reader in between finds no cache, as before the first write, and reads git.
 */
export function writeSmallFile(path: string, text: string | Uint8Array): void {
  const tmp = tempBeside(path);
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(tmp, text);
    unlinkQuiet(path);
    renameSync(tmp, path);
  } catch {
    unlinkQuiet(tmp); // only a slower next read; no half-written temp left behind
  }
}

function unlinkQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* not there */
  }
}
