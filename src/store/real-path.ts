// Where a path really is. An agent or a user may name a file through a symlink (to the repository,
// or inside it); leases and checks must judge the file itself. The longest prefix that exists is
// resolved through symlinks, the rest (a file about to be created) kept as typed. Globs are left
// alone: they name patterns, not files.
import { realpathSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { isGlob } from "../core/paths.ts";

function realOrNull(p: string): string | null {
  try {
    return realpathSync.native(p);
  } catch {
    return null;
  }
}

/** `input` (absolute, or relative to `cwd`) with its existing part resolved through symlinks. */
export function realLocation(input: string, cwd: string): string {
  if (isGlob(input) || /[\x00-\x1f]/.test(input)) return input;
  const abs = isAbsolute(input) ? input : resolve(cwd, input);
  const tail: string[] = [];
  let head = abs;
  for (;;) {
    const real = realOrNull(head);
    if (real !== null) return tail.length ? join(real, ...tail.reverse()) : real;
    const up = dirname(head);
    if (up === head) return abs;
    tail.push(head.slice(up.length).replace(/^[/\\]/, ""));
    head = up;
  }
}

/** Whether `input` names, lexically, something under `root` (before any symlink is followed). */
export function lexicallyInside(input: string, root: string, cwd: string): boolean {
  const abs = isAbsolute(input) ? resolve(input) : resolve(cwd, input);
  return abs === root || abs.startsWith(root.endsWith("/") ? root : root + "/");
}
