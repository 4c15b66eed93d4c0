// What git's configuration says, read from its files without starting git, for one-shot
// commands: a `git config` or `git update-ref` is often the only process they would start, and
// starting it (with node:child_process) costs a tenth of the command. Only the plain case is
// answered here: the files git 2.39 reads (system, global, the repository's, the worktree's),
// none with an include, no configuration from the environment (`git -c`, GIT_CONFIG_COUNT), the
// old `[section.sub]` header form absent, and every value asked for unquoted and unescaped.
// Anything else returns null and the caller asks git. The system file is looked for where
// Debian's and a source build's git keep it; a git built with another prefix has its system file
// elsewhere, unread here: in that case settings made system-wide would go unseen.
import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { headerOf, keyLineOf, needsUnquoting, withoutComment } from "./config-line.ts";
import { fileStampAndTime } from "./file-stamp.ts";
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

/**
 * Every entry of one file, parsed once whatever is asked of it (wanted picks), or null when the
 * file is beyond this reader whatever is asked. A value this reader cannot read (quoted, escaped)
 * is kept as unreadable: it fails only a question that asks for it, as before.
 */
export interface ParsedFile {
  /** `raw`: the value as written after the `=` and its blanks, its comment kept (undefined for a key alone). */
  entries: (ConfigEntry & { unreadable: boolean; raw: string | undefined })[];
  /** Every section header's name, lower-cased, in order (a section without keys too). */
  sections: string[];
  worktreeConfig: boolean;
}

function parseFile(text: string, included: string | null): ParsedFile | null {
  let section = "";
  let subsection: string | null = null;
  const out: ParsedFile = { entries: [], sections: [], worktreeConfig: false };
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line[0] === "#" || line[0] === ";") continue;
    if (line[0] === "[") {
      const h = headerOf(line);
      if (!h) return null;
      section = h.name.toLowerCase();
      subsection = h.subsection;
      if (section === "includeif" || (section === "include" && (included === null || subsection !== null))) return null;
      out.sections.push(section);
      continue;
    }
    if (line.endsWith("\\")) return null;
    const m = keyLineOf(line);
    if (!m) return null;
    const key = m.key.toLowerCase();
    // The one include this reader knows: the file the caller has already read before this one.
    if (section === "include") {
      if (key === "path" && m.value !== undefined && [included, `"${included}"`].includes(m.value.trim()) && !included!.includes('"') && !included!.includes("\\")) continue;
      return null;
    }
    if (section === "extensions" && subsection === null && key === "worktreeconfig") out.worktreeConfig = true;
    if (m.value === undefined) {
      out.entries.push({ section, subsection, key, value: null, unreadable: false, raw: undefined });
      continue;
    }
    const value = withoutComment(m.value);
    out.entries.push({ section, subsection, key, value, unreadable: needsUnquoting(value), raw: m.value });
  }
  return out;
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

/** One file as a ConfigRead read it: its text (null: no such file) and its stamp (file-stamp.ts; "" when none). */
export interface ReadFile {
  text: string | null;
  stamp: string;
  /** Its modification time in ms, 0 when there is no such file. */
  mtimeMs: number;
}

/**
 * git's configuration files as one opening of a repository reads them: each file stat'd and read
 * once, and parsed once, however many questions are asked of it (discovery, the ref write policy,
 * core.sharedRepository, whether refs are files, the policy cache's keys). A cold command asked
 * each question of the files anew: .git/config read five times before a pre-edit hook answered,
 * the system and global files twice, and a stat of each for the policy cache's key besides.
 * Kept for one opening only, never across operations: a long-running process opens again (or
 * asks without one) and sees the files as they are then.
 */
export class ConfigRead {
  private readonly files = new Map<string, ReadFile | null>();
  private readonly parsed = new Map<string, ParsedFile | null>();

  /**
   * The file as read the first time it was asked for, or null when it could not be read (not a
   * file, no permission): those who ask then do as they did on a failed read.
   */
  file(path: string): ReadFile | null {
    let f = this.files.get(path);
    if (f === undefined) this.files.set(path, (f = readWithStamp(path)));
    return f;
  }

  /**
   * The file's stamp and time (file-stamp.ts fileStampAndTime): those of the read where it was
   * read, else from a stat of its own, not a read (a policy cache's key asks the files' stamps).
   */
  stamp(path: string): { stamp: string; mtimeMs: number } {
    return this.files.get(path) ?? fileStampAndTime(path);
  }

  /** The file parsed (`included`: the one include it may hold, see parseEntries); null when beyond this reader or unreadable. */
  entries(path: string, included: string | null): ParsedFile | null | undefined {
    const key = `${included ?? ""}\0${path}`;
    let p = this.parsed.get(key);
    if (p !== undefined) return p;
    const f = this.file(path);
    if (!f) return null;
    if (f.text === null) return undefined;
    this.parsed.set(key, (p = parseFile(f.text, included)));
    return p;
  }

  /**
   * The file parsed, for questions callers asked of its text with a pattern anchored at each
   * line's start (`/^\s*bare\s*=\s*true/im`): a pattern a cold process compiles (~30-100 us each,
   * four of them before a hook answered) where the parse is there anyway. null when the file did
   * not parse, or holds a line break other than "\n" (where such a pattern sees lines this parse
   * does not): the caller asks its pattern.
   */
  plain(path: string): ParsedFile | null {
    const text = this.file(path)?.text;
    if (text == null || text.includes("\r") || text.includes("\u2028") || text.includes("\u2029")) return null;
    return this.entries(path, null) ?? null;
  }
}

/**
 * Whether a file (object-writer.ts wantsObjectFsync: the repository's own) asks git to flush loose
 * objects, as its patterns read it: core.fsyncObjectFiles set to true, yes, on or 1 as written,
 * or the first `fsync = ` line naming loose-object, objects, committed, added or all. undefined
 * where that first line has nothing after its `=` (the pattern may have seen blanks there).
 */
export function objectFsyncIn(file: ParsedFile): boolean | undefined {
  if (file.entries.some((e) => e.key === "fsyncobjectfiles" && e.raw !== undefined && ["true", "yes", "on", "1"].includes(e.raw.toLowerCase()))) return true;
  const first = file.entries.find((e) => e.key === "fsync" && e.raw !== undefined);
  if (first?.raw === "") return undefined;
  return !!first && first.raw!.split(",").some((part) => ["loose-object", "objects", "committed", "added", "all"].includes(part.trim().toLowerCase()));
}

/**
 * Whether a key `key` is set to a value that starts with `prefix` (any case), as
 * `^\s*<key>\s*=\s*<prefix>` (multi-line) finds it; undefined where such a key has nothing after
 * its `=`, since the pattern's blanks run on into the next line: the caller asks the pattern.
 */
export function setTo(file: ParsedFile, key: string, prefix: string): boolean | undefined {
  let found = false;
  for (const e of file.entries) {
    if (e.key !== key || e.raw === undefined) continue;
    if (e.raw === "") return undefined;
    found ||= e.raw.toLowerCase().startsWith(prefix);
  }
  return found;
}

/**
 * One stat (the stamp fileStampAndTime gives, file-stamp.ts), then the read: an absent file costs
 * the stat alone and no thrown error. null for a file that cannot be read.
 */
function readWithStamp(path: string): ReadFile | null {
  try {
    const st = statSync(path, { throwIfNoEntry: false, bigint: true });
    if (!st) return { text: null, stamp: "", mtimeMs: 0 };
    return { text: readFileSync(path, "utf8"), stamp: `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`, mtimeMs: Number(st.mtimeNs / 1_000_000n) };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // Gone since the stat, or a file where a folder should be: none, as a read would find.
    return code === "ENOENT" || code === "ENOTDIR" ? { text: null, stamp: "", mtimeMs: 0 } : null;
  }
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
