// git's config files as one opening of a repository reads them (ConfigRead): each file stat'd and
// read once, parsed once, and the questions callers asked of a file's text with patterns asked of
// its parse where it answers as they did. config-scan.ts puts the files in git's order and answers
// with them; config-line.ts reads a line.
import { readFileSync } from "node:fs";
import { headerOf, keyLineOf, needsUnquoting, withoutComment } from "./config-line.ts";
import { fileStampAndTime } from "./file-stamp.ts";
import { readConfigMemo, saveConfigMemo, type MemoFile } from "./config-memo.ts";

/** One setting: section and key lower-cased as git prints them, the subsection as written. */
export interface ConfigEntry {
  section: string;
  subsection: string | null;
  key: string;
  /** null for a key written alone (a boolean true). */
  value: string | null;
}

/**
 * Every entry of one file, parsed once whatever is asked of it (config-scan.ts's wanted picks),
 * or null when the file is beyond this reader whatever is asked. A value this reader cannot read
 * (quoted, escaped) is kept as unreadable: it fails only a question that asks for it, as before.
 */
export interface ParsedFile {
  /** `raw`: the value as written after the `=` and its blanks, its comment kept (undefined for a key alone). */
  entries: (ConfigEntry & { unreadable: boolean; raw: string | undefined })[];
  /** Every section header's name, lower-cased, in order (a section without keys too). */
  sections: string[];
  worktreeConfig: boolean;
}

export function parseFile(text: string, included: string | null): ParsedFile | null {
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
 * asks without one) and sees the files as they are then. What crosses openings is the memo
 * (useMemo, config-memo.ts), and only for a file whose stamp is still the one it was kept with.
 */
export class ConfigRead {
  private readonly files = new Map<string, ReadFile | null>();
  private readonly parsed = new Map<string, ParsedFile | null>();
  /** What an earlier opening kept (config-memo.ts), and the repository it is kept in; see useMemo. */
  private memo: Map<string, MemoFile> | null = null;
  private memoDir: string | null = null;
  /** Paths whose text came from the memo (their stamps matched), and whether anything was read or parsed anew. */
  private readonly fromMemo = new Set<string>();
  private fresh = false;

  /**
   * Reads through what an earlier opening of the repository at `commonDir` kept: a file whose stamp
   * is the kept one is taken, text and parses, from there (discovery calls this for a repository
   * whose folders are this user's, before its first read). saveMemo keeps this opening's reads.
   */
  useMemo(commonDir: string): void {
    this.memoDir = commonDir;
    this.memo = readConfigMemo(commonDir);
  }

  /**
   * The file as read the first time it was asked for, or null when it could not be read (not a
   * file, no permission): those who ask then do as they did on a failed read.
   */
  file(path: string): ReadFile | null {
    let f = this.files.get(path);
    if (f === undefined) {
      const kept = this.memo?.get(path);
      const r = readWithStamp(path, kept?.stamp);
      if (r && r.text === undefined) {
        // The stamp is the kept one: so is the text.
        f = { ...r, text: kept!.text };
        this.fromMemo.add(path);
      } else {
        f = r as ReadFile | null;
        if (f?.text != null) this.fresh = true;
      }
      this.files.set(path, f);
    }
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
    const kept = this.fromMemo.has(path) ? this.memo!.get(path)!.parsed[included ?? ""] : undefined;
    if (kept !== undefined) p = kept;
    else {
      p = parseFile(f.text, included);
      this.fresh = true;
    }
    this.parsed.set(key, p);
    return p;
  }

  /**
   * Keeps what this opening read and parsed for the next one (config-memo.ts), when it read or
   * parsed anything the memo lacked: after a hook's answer, off its path. Nothing without useMemo.
   */
  saveMemo(): void {
    if (!this.memoDir || !this.fresh) return;
    const files: [string, MemoFile & { mtimeMs: number }][] = [];
    for (const [path, f] of this.files) {
      if (!f || f.text === null) continue;
      const parsed: Record<string, ParsedFile | null> = {};
      for (const [key, p] of this.parsed) {
        const cut = key.indexOf("\0");
        if (key.slice(cut + 1) === path) parsed[key.slice(0, cut)] = p;
      }
      files.push([path, { stamp: f.stamp, mtimeMs: f.mtimeMs, text: f.text, parsed }]);
    }
    saveConfigMemo(this.memoDir, files, this.memo);
    this.fresh = false;
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
 * The stamp fileStampAndTime gives (file-stamp.ts: one stat), then the read: an absent file costs
 * the stat alone and no thrown error. null for a file that cannot be read. No read where the stamp
 * is `kept` (the memo's): the text is then undefined, for the caller to take the kept one.
 */
function readWithStamp(path: string, kept?: string): (Omit<ReadFile, "text"> & { text: string | null | undefined }) | null {
  try {
    const { stamp, mtimeMs } = fileStampAndTime(path);
    if (!stamp) return { text: null, stamp: "", mtimeMs: 0 };
    return { text: stamp === kept ? undefined : readFileSync(path, "utf8"), stamp, mtimeMs };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // Gone since the stat, or a file where a folder should be: none, as a read would find.
    return code === "ENOENT" || code === "ENOTDIR" ? { text: null, stamp: "", mtimeMs: 0 } : null;
  }
}
