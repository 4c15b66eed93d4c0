// What git's configuration says, read from its files without starting git, for one-shot
// commands: a `git config` or `git update-ref` is often the only process they would start, and
// starting it (with node:child_process) costs a tenth of the command. Only the plain case is
// answered here: the files git 2.39 reads (system, global, the repository's, the worktree's),
// none with an include, no configuration from the environment (`git -c`, GIT_CONFIG_COUNT), the
// old `[section.sub]` header form absent, and every value asked for unquoted and unescaped.
// Anything else returns null and the caller asks git. The system file is looked for where
// Debian's and a source build's git keep it; a git built with another prefix has its system file
// elsewhere, unread here: in that case settings made system-wide would go unseen.
import { homedir } from "node:os";
import { join } from "node:path";
import { readIfThere } from "./optional-file.ts";
import { refWritePolicy, type RefWritePolicy } from "./loose-ref-writer.ts";
import { gitSync } from "./run.ts";
import { sharedPerm } from "./shared-perm.ts";

const SYSTEM_FILES = ["/etc/gitconfig", "/usr/local/etc/gitconfig"];

/** One setting: section and key lower-cased as git prints them, the subsection as written. */
export interface ConfigEntry {
  section: string;
  subsection: string | null;
  key: string;
  /** null for a key written alone (a boolean true). */
  value: string | null;
}

export type Wanted = (section: string, subsection: string | null, key: string) => boolean;

/** The files git reads, in its order, or null when the environment adds configuration of its own. */
export function configFiles(env: NodeJS.ProcessEnv, commonDir: string, gitDir: string | null, includes: string | null = null): string[] | null {
  if (env.GIT_CONFIG_PARAMETERS || env.GIT_CONFIG_COUNT || env.GIT_CONFIG) return null;
  const files: string[] = [];
  // git reads GIT_CONFIG_NOSYSTEM as a boolean: "0", "false", "no", "off" or empty read the system file.
  const noSystem = env.GIT_CONFIG_NOSYSTEM !== undefined && !/^(0|false|no|off|)$/i.test(env.GIT_CONFIG_NOSYSTEM.trim());
  if (!noSystem) files.push(...(env.GIT_CONFIG_SYSTEM ? [env.GIT_CONFIG_SYSTEM] : SYSTEM_FILES));
  if (env.GIT_CONFIG_GLOBAL) files.push(env.GIT_CONFIG_GLOBAL);
  else {
    const home = env.HOME || homedir();
    files.push(join(env.XDG_CONFIG_HOME || join(home, ".config"), "git", "config"), join(home, ".gitconfig"));
  }
  // A separate store's config includes the repository's first (separate-store.ts): read in its place.
  if (includes) files.push(includes);
  files.push(join(commonDir, "config"));
  if (gitDir) files.push(join(gitDir, "config.worktree"));
  return files;
}

/**
 * The entries of one file that `want` asks for, in order, or null when the file is beyond this
 * reader (an include, a continued line, an old-style or escaped header, a quoted or escaped value
 * asked for). `worktreeConfig` is set when the file turns on extensions.worktreeConfig.
 */
export function parseEntries(text: string, want: Wanted, seen: { worktreeConfig?: boolean } = {}, included: string | null = null): ConfigEntry[] | null {
  let section = "";
  let subsection: string | null = null;
  const out: ConfigEntry[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line[0] === "#" || line[0] === ";") continue;
    if (line[0] === "[") {
      const m = /^\[\s*([A-Za-z0-9-]+)\s*(?:"([^"\\]*)")?\s*\]\s*(?:[#;].*)?$/.exec(line);
      if (!m) return null;
      section = m[1]!.toLowerCase();
      subsection = m[2] ?? null;
      if (section === "includeif" || (section === "include" && (included === null || subsection !== null))) return null;
      continue;
    }
    if (line.endsWith("\\")) return null;
    const m = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!m) return null;
    const key = m[1]!.toLowerCase();
    // The one include this reader knows: the file the caller has already read before this one.
    if (section === "include") {
      if (key === "path" && m[2] !== undefined && [included, `"${included}"`].includes(m[2].trim()) && !/["\\]/.test(included!)) continue;
      return null;
    }
    if (section === "extensions" && subsection === null && key === "worktreeconfig") seen.worktreeConfig = true;
    if (!want(section, subsection, key)) continue;
    if (m[2] === undefined) {
      out.push({ section, subsection, key, value: null });
      continue;
    }
    const value = m[2].replace(/\s+[#;].*$/, "").trim();
    if (/["\\#;]/.test(value)) return null;
    out.push({ section, subsection, key, value });
  }
  return out;
}

/**
 * Every entry `want` asks for across git's files, in git's order (a later one wins), or null when
 * git must be asked. Without `gitDir` (the worktree's git folder), a repository that turns on
 * per-worktree config is git's to read.
 */
export function scanConfig(env: NodeJS.ProcessEnv, commonDir: string, gitDir: string | null, want: Wanted, includes: string | null = null): ConfigEntry[] | null {
  const files = configFiles(env, commonDir, gitDir, includes);
  if (!files) return null;
  const all: ConfigEntry[] = [];
  const seen: { worktreeConfig?: boolean } = {};
  for (const file of files) {
    let text: string | null;
    try {
      text = readIfThere(file);
    } catch {
      return null;
    }
    if (text === null) continue;
    const entries = parseEntries(text, want, seen, includes !== null && file === join(commonDir, "config") ? includes : null);
    if (entries === null) return null;
    all.push(...entries);
  }
  return seen.worktreeConfig && !gitDir ? null : all;
}

const REF_WRITE_KEYS = new Set(["logallrefupdates", "sharedrepository", "hookspath", "fsync", "filesreflocktimeout"]);

/**
 * The watched keys of one file as `git config --null --list` would print them (`key\nvalue\0`),
 * or null when the file is beyond this reader.
 */
export function watchedEntries(text: string): string | null {
  const entries = parseEntries(text, (s, sub, k) => s === "core" && sub === null && REF_WRITE_KEYS.has(k));
  return entries && asNullList(entries);
}

function asNullList(entries: ConfigEntry[]): string {
  return entries.map((e) => (e.value === null ? `${e.section}.${e.key}\0` : `${e.section}.${e.key}\n${e.value}\0`)).join("");
}

/**
 * The ref write policy from git's files (core.logAllRefUpdates and friends), or null when git must
 * be asked. `mainCommonDir`: commonDir is a separate store whose config includes that repository's
 * config (separate-store.ts); no worktree config applies there.
 */
export function scanRefWritePolicy(env: NodeJS.ProcessEnv, commonDir: string, gitDir: string | null, workTree: string | null, mainCommonDir: string | null = null): RefWritePolicy | null {
  const includes = mainCommonDir ? join(mainCommonDir, "config") : null;
  const entries = scanConfig(env, commonDir, gitDir, (s, sub, k) => s === "core" && sub === null && REF_WRITE_KEYS.has(k), includes);
  return entries && refWritePolicy(asNullList(entries), commonDir, workTree);
}

/**
 * `git config --get-regexp` output (`<key> <value>` lines, the key as git prints it) for the
 * settings a sync remote is chosen by: handoff.remote, handoff.remoteTimeout, handoff.machine,
 * remote.<name>.url and remote.<name>.handoffRefPrefix; null when git must be asked.
 */
export function scanRemoteSettings(env: NodeJS.ProcessEnv, commonDir: string): string | null {
  const entries = scanConfig(env, commonDir, null, (s, sub, k) =>
    s === "handoff" ? sub === null && (k === "remote" || k === "remotetimeout" || k === "machine") : s === "remote" && sub !== null && (k === "url" || k === "handoffrefprefix"),
  );
  if (!entries) return null;
  return entries.map((e) => `${e.section}.${e.subsection === null ? "" : `${e.subsection}.`}${e.key}${e.value === null ? "" : ` ${e.value}`}\n`).join("");
}

/**
 * The repository's core.sharedRepository (all scopes, as git reads it), from git's files where
 * they are plain (config-scan.ts), else from git.
 */
export function repoSharedPerm(commonDir: string, gitDir: string | null, includes: string | null = null): number {
  const entries = scanConfig(process.env, commonDir, gitDir, (s, sub, k) => s === "core" && sub === null && k === "sharedrepository", includes);
  if (entries) return entries.length ? sharedPerm(entries.at(-1)!.value) : 0;
  const r = gitSync(["config", "--get", "core.sharedRepository"], { cwd: commonDir, env: { GIT_DIR: commonDir } });
  return r.code === 0 ? sharedPerm(r.stdout) : 0;
}
