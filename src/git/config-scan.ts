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
import { ConfigRead, parseFile, type ConfigEntry, type ParsedFile } from "./config-read.ts";
import { refWritePolicy, type RefWritePolicy } from "./loose-ref-writer.ts";
import { gitSync } from "./run.ts";
import { sharedPerm } from "./shared-perm.ts";

const SYSTEM_FILES = ["/etc/gitconfig", "/usr/local/etc/gitconfig"];

export type { ConfigEntry } from "./config-read.ts";

export type Wanted = (section: string, subsection: string | null, key: string) => boolean;

/**
 * The files git reads, in its order, or null when the environment adds configuration of its own.
 * Paths are put together as git does, by appending (path.join's normalizing loop cost a cold
 * process ~5 us a call, eight calls an opening); ConfigRead keys its reads by these strings.
 */
export function configFiles(env: NodeJS.ProcessEnv, commonDir: string, gitDir: string | null, includes: string | null = null): string[] | null {
  if (env.GIT_CONFIG_PARAMETERS || env.GIT_CONFIG_COUNT || env.GIT_CONFIG) return null;
  const files: string[] = [];
  // git reads GIT_CONFIG_NOSYSTEM as a boolean: "0", "false", "no", "off" or empty read the system file.
  // (Compared, not matched: a pattern is compiled anew by every cold process, config-line.ts.)
  const noSystem = env.GIT_CONFIG_NOSYSTEM !== undefined && !["0", "false", "no", "off", ""].includes(env.GIT_CONFIG_NOSYSTEM.trim().toLowerCase());
  if (!noSystem) files.push(...(env.GIT_CONFIG_SYSTEM ? [env.GIT_CONFIG_SYSTEM] : SYSTEM_FILES));
  if (env.GIT_CONFIG_GLOBAL) files.push(env.GIT_CONFIG_GLOBAL);
  else {
    const home = env.HOME || homedir();
    files.push(`${env.XDG_CONFIG_HOME || `${home}/.config`}/git/config`, `${home}/.gitconfig`);
  }
  // A separate store's config includes the repository's first (separate-store.ts): read in its place.
  if (includes) files.push(includes);
  files.push(`${commonDir}/config`);
  if (gitDir) files.push(`${gitDir}/config.worktree`);
  return files;
}

/**
 * The entries of one file that `want` asks for, in order, or null when the file is beyond this
 * reader (an include, a continued line, an old-style or escaped header, a quoted or escaped value
 * asked for). `worktreeConfig` is set when the file turns on extensions.worktreeConfig.
 */
export function parseEntries(text: string, want: Wanted, seen: { worktreeConfig?: boolean } = {}, included: string | null = null): ConfigEntry[] | null {
  const file = parseFile(text, included);
  if (!file) return null;
  if (file.worktreeConfig) seen.worktreeConfig = true;
  return wanted(file, want);
}

/** The entries of a parsed file that `want` asks for, or null when one of them is beyond this reader. */
function wanted(file: ParsedFile, want: Wanted): ConfigEntry[] | null {
  const out: ConfigEntry[] = [];
  for (const e of file.entries) {
    if (!want(e.section, e.subsection, e.key)) continue;
    if (e.unreadable) return null;
    out.push({ section: e.section, subsection: e.subsection, key: e.key, value: e.value });
  }
  return out;
}

/**
 * Every entry `want` asks for across git's files, in git's order (a later one wins), or null when
 * git must be asked. Without `gitDir` (the worktree's git folder), a repository that turns on
 * per-worktree config is git's to read.
 */
export function scanConfig(env: NodeJS.ProcessEnv, commonDir: string, gitDir: string | null, want: Wanted, includes: string | null = null, read: ConfigRead = new ConfigRead()): ConfigEntry[] | null {
  const files = configFiles(env, commonDir, gitDir, includes);
  if (!files) return null;
  const own = `${commonDir}/config`;
  const all: ConfigEntry[] = [];
  let worktreeConfig = false;
  for (const file of files) {
    const parsed = read.entries(file, includes !== null && file === own ? includes : null);
    if (parsed === undefined) continue; // no such file
    if (parsed === null) return null;
    worktreeConfig ||= parsed.worktreeConfig;
    const entries = wanted(parsed, want);
    if (entries === null) return null;
    all.push(...entries);
  }
  return worktreeConfig && !gitDir ? null : all;
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
export function scanRefWritePolicy(
  env: NodeJS.ProcessEnv,
  commonDir: string,
  gitDir: string | null,
  workTree: string | null,
  mainCommonDir: string | null = null,
  read?: ConfigRead,
): RefWritePolicy | null {
  const includes = mainCommonDir ? `${mainCommonDir}/config` : null;
  const entries = scanConfig(env, commonDir, gitDir, (s, sub, k) => s === "core" && sub === null && REF_WRITE_KEYS.has(k), includes, read);
  return entries && refWritePolicy(asNullList(entries), commonDir, workTree);
}

/**
 * `git config --get-regexp` output (`<key> <value>` lines, the key as git prints it) for the
 * settings a sync remote is chosen by: handoff.remote, handoff.remoteTimeout, handoff.machine,
 * remote.<name>.url and remote.<name>.handoffRefPrefix; null when git must be asked.
 */
export function scanRemoteSettings(env: NodeJS.ProcessEnv, commonDir: string, read?: ConfigRead): string | null {
  const entries = scanConfig(
    env,
    commonDir,
    null,
    (s, sub, k) => (s === "handoff" ? sub === null && (k === "remote" || k === "remotetimeout" || k === "machine") : s === "remote" && sub !== null && (k === "url" || k === "handoffrefprefix")),
    null,
    read,
  );
  if (!entries) return null;
  return entries.map((e) => `${e.section}.${e.subsection === null ? "" : `${e.subsection}.`}${e.key}${e.value === null ? "" : ` ${e.value}`}\n`).join("");
}

/**
 * The repository's core.sharedRepository (all scopes, as git reads it), from git's files where
 * they are plain (config-scan.ts), else from git.
 */
export function repoSharedPerm(commonDir: string, gitDir: string | null, includes: string | null = null, read?: ConfigRead): number {
  const entries = scanConfig(process.env, commonDir, gitDir, (s, sub, k) => s === "core" && sub === null && k === "sharedrepository", includes, read);
  if (entries) return entries.length ? sharedPerm(entries.at(-1)!.value) : 0;
  const r = gitSync(["config", "--get", "core.sharedRepository"], { cwd: commonDir, env: { GIT_DIR: commonDir } });
  return r.code === 0 ? sharedPerm(r.stdout) : 0;
}
