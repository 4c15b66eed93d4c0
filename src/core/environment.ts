// Failures of the machine, not of the tool: a full disk, a read-only file system, a permission
// the user lacks, a process out of file descriptors, a git configuration git itself cannot read.
// They are reported as `environment` (exit 5) with the cause and the path, never as "unexpected
// error", which is reserved for bugs.
import type { Refusal } from "./errors.ts";

const CAUSES: Record<string, string> = {
  ENOSPC: "no space left on the device",
  EDQUOT: "the disk quota is exceeded",
  EROFS: "the file system is read-only",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EMFILE: "too many open files in this process",
  ENFILE: "too many open files on this machine",
  // Not an errno: git refuses to run at all while a configuration file it reads is malformed.
  GITCONFIG: "git cannot read its configuration",
};

const FIX_MACHINE = "free disk space, fix permissions or raise the open-file limit, then run the command again; nothing was half-written";
const FIX_CONFIG = "fix the line git names in that file (git config --list shows the same error until it parses), then run the command again; nothing was written";

/** The same causes as git and the C library word them on stderr. */
const PROSE: [RegExp, string][] = [
  [/No space left on device/i, "ENOSPC"],
  [/Disk quota exceeded/i, "EDQUOT"],
  [/Read-only file system/i, "EROFS"],
  [/Permission denied/i, "EACCES"],
  [/Operation not permitted/i, "EPERM"],
  [/Too many open files in system/i, "ENFILE"],
  [/Too many open files/i, "EMFILE"],
  [/bad config (line|variable|value|file)|bad numeric config value|bad boolean config value/i, "GITCONFIG"],
];

/** The environment refusal for an error, or null when it is not one. */
export function environmentRefusal(e: unknown, path?: string): Refusal | null {
  const err = e as { code?: unknown; path?: unknown; dest?: unknown; message?: unknown } | null;
  let code = typeof err?.code === "string" && CAUSES[err.code] ? err.code : null;
  const message = typeof err?.message === "string" ? err.message : "";
  if (!code) code = PROSE.find(([re]) => re.test(message))?.[1] ?? null;
  if (!code) return null;
  const where = path ?? (typeof err?.path === "string" ? err.path : typeof err?.dest === "string" ? err.dest : (/'([^']+)'/.exec(message)?.[1] ?? (code === "GITCONFIG" ? / in (?:file|blob) (\S+)/.exec(message)?.[1] : undefined)));
  return {
    code: "environment",
    message: `${CAUSES[code]}${where ? ` (${where})` : ""}: ${message.split("\n")[0]}`.slice(0, 500),
    data: { cause: code, ...(where ? { path: where } : {}) },
    suggestions: [{ action: "fix_input", detail: code === "GITCONFIG" ? FIX_CONFIG : FIX_MACHINE }],
  };
}
