// core.sharedRepository, as git applies it (git's path.c adjust_shared_perm): a repository shared
// by a group gets group-writable folders with setgid, and files group members can read and
// replace. Without it another member's `git hash-object -w` cannot add an object to a fan-out
// folder this process made, nor take a lock in .git/handoff.
import { chmodSync, fchmodSync, fstatSync, statSync } from "node:fs";

/**
 * git_config_perm: 0 leaves modes to the umask; a positive value is the bits added (0660 group,
 * 0664 everybody); a negative one, -(mode), the exact mode asked for with an octal value.
 */
export function sharedPerm(value: string | null | undefined): number {
  if (value === undefined) return 0;
  if (value === null) return 0o660; // a key written alone: true
  const v = value.trim().toLowerCase();
  if (v === "umask") return 0;
  if (v === "group") return 0o660;
  if (v === "all" || v === "world" || v === "everybody") return 0o664;
  if (/^[0-7]+$/.test(v)) {
    const i = parseInt(v, 8);
    if (i === 0) return 0;
    if (i === 1) return 0o660;
    if (i === 2) return 0o664;
    return (i & 0o600) === 0o600 ? -(i & 0o666) : 0; // git refuses such a mode; nothing is adjusted here
  }
  if (/^(true|yes|on)$/.test(v)) return 0o660;
  return 0;
}

/** git's calc_shared_perm, plus what adjust_shared_perm adds for folders. */
export function sharedMode(perm: number, mode: number, isDir: boolean): number {
  let tweak = Math.abs(perm);
  if (!(mode & 0o200)) tweak &= ~0o222;
  if (mode & 0o100) tweak |= (tweak & 0o444) >> 2;
  let out = perm < 0 ? (mode & ~0o777) | tweak : mode | tweak;
  if (isDir) {
    out |= (out & 0o444) >> 2;
    if (out & 0o060) out |= 0o2000;
  }
  return out & 0o7777;
}

/**
 * Makes what this process creates from now on (its files under .git/handoff, lock and temp files)
 * get the modes git gives a shared repository's files. Folders get setgid from their parent
 * (`git init --shared` sets it on .git).
 */
export function applySharedUmask(perm: number): void {
  if (perm) process.umask(sharedUmask(perm, process.umask()));
}

/** The umask under which files and folders this process makes get the modes git would give them. */
export function sharedUmask(perm: number, umask: number): number {
  const grant = Math.abs(perm) | ((Math.abs(perm) & 0o444) >> 2);
  return perm < 0 ? 0o777 & ~grant : umask & ~grant;
}

/** Applies the repository's sharing to a folder just made (setgid included, as git does). */
export function adjustSharedDir(path: string, perm: number): void {
  if (!perm) return;
  const mode = statSync(path).mode & 0o7777;
  const want = sharedMode(perm, mode, true);
  if (want !== mode) chmodSync(path, want);
}

/** Applies the repository's sharing to a file just made, through its descriptor. */
export function adjustSharedFd(fd: number, perm: number): void {
  if (!perm) return;
  const mode = fstatSync(fd).mode & 0o7777;
  const want = sharedMode(perm, mode, false);
  if (want !== mode) fchmodSync(fd, want);
}
