// git config reads and writes for the repository's own settings (handoff.*, core.hooksPath).
import { fileStamp } from "./file-stamp.ts";
import { git } from "./run.ts";

/** The repository's own config file as it is now (file-stamp.ts), for caches of what was read from it. */
export function configFileStamp(commonDir: string): string {
  return fileStamp(`${commonDir}/config`) || "none";
}

/** One value, or null when unset. */
export async function configGet(cwd: string, key: string, scope: "any" | "local" = "any"): Promise<string | null> {
  const r = await git(["config", ...(scope === "local" ? ["--local"] : []), "--get", key], { cwd });
  const v = r.stdout.trim();
  return r.code === 0 && v ? v : null;
}

/** A setting and the scope it comes from (global, system, local, worktree, command), or null. */
export async function configWithScope(cwd: string, key: string): Promise<{ value: string; scope: string } | null> {
  const r = await git(["config", "--show-scope", "--get", key], { cwd });
  const m = /^([a-z]+)\t(.*)$/s.exec(r.stdout.trim());
  return r.code === 0 && m && m[2] ? { scope: m[1]!, value: m[2] } : null;
}

export async function configSetLocal(cwd: string, key: string, value: string): Promise<void> {
  const r = await git(["config", "--local", "--end-of-options", key, value], { cwd });
  if (r.code !== 0) throw new Error(`git config ${key} failed: ${r.stderr.trim().split("\n")[0]}`);
}

export async function configUnsetLocal(cwd: string, key: string): Promise<void> {
  // Exit 5 means "was not set": nothing to undo.
  const r = await git(["config", "--local", "--unset-all", key], { cwd });
  if (r.code !== 0 && r.code !== 5) throw new Error(`git config --unset ${key} failed: ${r.stderr.trim().split("\n")[0]}`);
}

/** `git rev-parse --git-path <name>`: where git keeps `hooks` and friends for this worktree. */
export async function gitPath(cwd: string, name: string): Promise<string> {
  const r = await git(["rev-parse", "--git-path", name], { cwd });
  if (r.code !== 0) throw new Error(`git rev-parse --git-path failed: ${r.stderr.trim().split("\n")[0]}`);
  return r.stdout.trim();
}
