// Walks the files under a folder of the git dir (loose refs, their lock files), depth first. A
// folder that vanishes meanwhile (git removes empty ref folders) is skipped, not an error.
import { readdirSync } from "node:fs";
import { join } from "node:path";

/** Calls `visit` with each file's path and name under `dir`; stops as soon as it returns false. */
export function walkFiles(dir: string, visit: (path: string, name: string) => boolean | void): boolean {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return true;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory() ? !walkFiles(path, visit) : visit(path, e.name) === false) return false;
  }
  return true;
}
