// Small cache files under .git/handoff/: read whole, replaced by rename (never seen torn).
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { uniqueSuffix } from "../git/unique-name.ts";

/** Writes `text` to a temporary file beside `path` and renames it over `path`; throws on failure. */
export function replaceFile(path: string, text: string): void {
  const tmp = `${path}.${process.pid}-${uniqueSuffix()}.tmp`;
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

/** Best effort: a cache that cannot be written only makes the next read slower. */
export function writeSmallFile(path: string, text: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
    replaceFile(path, text);
  } catch {
    /* only a slower next read */
  }
}
