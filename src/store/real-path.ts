// Where a path really is. An agent or a user may name a file through a symlink (to the repository,
// or inside it); leases and checks must judge the file itself. The longest prefix that exists is
// resolved through symlinks, the rest (a file about to be created) kept as typed. A name that is a
// symlink to nothing yet (a dangling link) is followed too: a write through it creates its target,
// so the target is what is judged. A glob's own pattern is left alone (it names files to come), its
// leading folders are resolved like any path (realPatternLocation).
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { hasControlChar, hasDotDotSegment } from "../core/char-scan.ts";
import { isGlob } from "../core/paths.ts";

/** Links followed before a path is taken as it stands (the kernel's own bound, ELOOP, is 40). */
const MAX_LINKS = 40;

function realOrNull(p: string): string | null {
  try {
    return realpathSync.native(p);
  } catch {
    return null;
  }
}

/**
 * Whether nothing is at `p` (ENOENT, or ENOTDIR: a file where a folder should be): then it neither
 * resolves nor is a link, and neither is asked. A new file's missing folders are the common case
 * (an agent's Write), and each failed realpath or readlink is a thrown error with its stack: a
 * pre-edit hook's check of one path three folders deep made six of them before it answered
 * (~12 KB of the young heap, whose first collection, ~1 ms, came before the answer). An lstat that
 * finds nothing makes no error and no object.
 */
function nothingAt(p: string): boolean {
  try {
    return lstatSync(p, { throwIfNoEntry: false }) === undefined;
  } catch {
    return false; // another error (a permission, a loop): asked as before, which says what it is
  }
}

function linkOrNull(p: string): string | null {
  try {
    return readlinkSync(p);
  } catch {
    return null; // not a symlink, or nothing there
  }
}

/**
 * A path or a glob with its leading literal folders resolved through symlinks (the rest kept as
 * typed): `link/**` where `link -> /etc` is `/etc/**`, which a caller refuses as outside the
 * repository, as it refuses `link/passwd`. A glob that starts with a pattern is left alone; a
 * folder's trailing slash is kept.
 */
export function realPatternLocation(input: string, cwd: string): string {
  if (!isGlob(input)) {
    // A trailing slash (a folder) survives resolution: it is how a folder lease is asked for.
    const real = realLocation(input, cwd);
    return real !== input && (input.endsWith("/") || input.endsWith("\\")) ? real + "/" : real;
  }
  const parts = input.split("/");
  const first = parts.findIndex((p) => isGlob(p));
  if (first <= 0 || /[\x00-\x1f]/.test(input)) return input;
  return [realLocation(parts.slice(0, first).join("/"), cwd), ...parts.slice(first)].join("/");
}

/**
 * `input` (absolute, or relative to `cwd`) with its existing part resolved through symlinks, as the
 * kernel walks it: `link/..` goes up from where the link leads, not back to where it is, for a
 * relative path as for an absolute one.
 */
export function realLocation(input: string, cwd: string): string {
  if (isGlob(input) || hasControlChar(input)) return input;
  return located(isAbsolute(input) ? input : `${resolve(cwd)}/${input}`, 0);
}

/**
 * Every place a write to `input` may land: where the kernel takes it (realLocation) and, when the
 * path has a `..` that a symlink before it sends elsewhere, where a tool that tidies the path
 * first (`a/link/../b` as `a/b`) writes. A check judges each.
 */
export function writeLocations(input: string, cwd: string): string[] {
  const kernel = realLocation(input, cwd);
  if (isGlob(input) || !hasDotDotSegment(input)) return [kernel];
  const tidied = realLocation(resolve(cwd, input), cwd);
  return tidied === kernel ? [kernel] : [kernel, tidied];
}

function located(abs: string, links: number): string {
  const tail: string[] = [];
  let head = abs;
  for (;;) {
    if (!nothingAt(head)) {
      const real = realOrNull(head);
      if (real !== null) return tail.length ? join(real, ...tail.reverse()) : real;
      // It does not resolve: a symlink whose target is missing (or a loop of them), or nothing there after all.
      const target = links < MAX_LINKS ? linkOrNull(head) : null;
      if (target !== null) return located(join(resolve(dirname(head), target), ...tail.reverse()), links + 1);
    }
    const up = dirname(head);
    if (up === head) return abs;
    const name = head.slice(up.length);
    tail.push(name.startsWith("/") || name.startsWith("\\") ? name.slice(1) : name);
    head = up;
  }
}

/** Whether `input` names, lexically, something under `root` (before any symlink is followed). */
export function lexicallyInside(input: string, root: string, cwd: string): boolean {
  const abs = isAbsolute(input) ? resolve(input) : resolve(cwd, input);
  return abs === root || abs.startsWith(root.endsWith("/") ? root : root + "/");
}
