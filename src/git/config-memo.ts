// git's config files as an earlier opening of this repository read and parsed them, kept in one
// small file (.git/handoff/config-read.cache) for the next one-shot process: a file whose stamp
// (file-stamp.ts: inode, size, and change and modification times) is still the one
// kept there is neither read nor parsed again (config-read.ts ConfigRead). A cold pre-edit hook
// read three files and parsed each before it answered; the parse is a pure function of the text,
// so a kept parse is the parse. The stat stays: it is what says the file is the same.
// The memo holds this user's global config too, and in a shared repository (core.sharedRepository)
// others can read and write the folder: it is written readable by its owner alone, and read only
// when this user owns it (another's is none, and is replaced at the next write).
import { renameSync, statSync } from "node:fs";
import { createExclusive, ownFolder, readOwnTextNoFollow, tempBeside, unlinkQuiet } from "./safe-file.ts";
import type { ParsedFile } from "./config-read.ts";

/**
 * Bumped whenever what is kept changes shape: another version's file is read as none. 2: stamps
 * with times in milliseconds and their fraction (file-stamp.ts), where 1's were in nanoseconds.
 */
const VERSION = 2;

export const CONFIG_MEMO = "handoff/config-read.cache";

/** More files than one opening reads (system, global, repository, worktree, a separate store's). */
const MAX_FILES = 16;

/**
 * Larger files are read and parsed each time as before: the memo is read whole by every opening,
 * and its parse grows with the files it holds (git's own config files are a few hundred bytes).
 */
const MAX_TEXT = 32 * 1024;

/**
 * A file changed within the last two seconds may change again within its timestamp's tick unseen
 * (git's "racy" index entries, repo-policy.ts RACY_MS): it is not kept.
 */
const RACY_MS = 2_000;

/** One file as kept: its stamp, its text, and its parses by the include they were asked with ("" for none). */
export interface MemoFile {
  stamp: string;
  text: string;
  parsed: Record<string, ParsedFile | null>;
}

/** The kept files by path, or null: none, unreadable, another version's, or not as written. */
export function readConfigMemo(commonDir: string): Map<string, MemoFile> | null {
  const path = `${commonDir}/${CONFIG_MEMO}`;
  // None yet (no pre-edit hook ran here): a stat says so without the thrown ENOENT of a failed
  // open (~60 us in a cold process, which every command opening this repository would pay).
  try {
    if (!statSync(path, { throwIfNoEntry: false })) return null;
  } catch {
    return null; // not reachable (a folder that may not be searched): none
  }
  // The reader policy.cache's is (small-file.ts): one first run of its code for both.
  const text = readOwnTextNoFollow(path);
  if (text === null) return null; // none, a link, another user's, unreadable
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return null;
  }
  const d = data as { v?: unknown; files?: unknown };
  if (d?.v !== VERSION || !Array.isArray(d.files)) return null;
  const out = new Map<string, MemoFile>();
  for (const item of d.files as unknown[]) {
    if (!Array.isArray(item) || typeof item[0] !== "string" || !isMemoFile(item[1])) return null;
    out.set(item[0], item[1]);
  }
  return out;
}

/**
 * Keeps `files` (path, stamp, modification time, text, parses) for the next opening, those changed
 * too lately to trust left out, along with what was kept before and not asked this time. Best
 * effort: a memo that cannot be written only leaves the next opening to read the files.
 */
export function saveConfigMemo(commonDir: string, files: Iterable<[string, MemoFile & { mtimeMs: number }]>, before: Map<string, MemoFile> | null, now = Date.now()): void {
  const keep = new Map<string, MemoFile>(before ?? []);
  for (const [path, f] of files) {
    // Moved to the end: the files asked last are the last to go when there are too many.
    keep.delete(path);
    if (f.mtimeMs <= now - RACY_MS && f.text.length <= MAX_TEXT) keep.set(path, { stamp: f.stamp, text: f.text, parsed: f.parsed });
  }
  // Files no opening asks any more (another HOME, GIT_CONFIG_GLOBAL) go, the oldest first.
  for (const path of keep.keys()) if (keep.size > MAX_FILES) keep.delete(path);
  // Nothing new to keep (a file too large or too recent read again): no write at every edit.
  if (before && sameFiles(before, keep)) return;
  const path = `${commonDir}/${CONFIG_MEMO}`;
  const tmp = tempBeside(path);
  try {
    ownFolder(`${commonDir}/handoff`);
    createExclusive(tmp, JSON.stringify({ v: VERSION, files: [...keep] }), 0o600);
    renameSync(tmp, path);
  } catch {
    unlinkQuiet(tmp); // only a slower next opening
  }
}

/** Whether two memos hold the same files at the same stamps, with parses for the same includes. */
function sameFiles(a: Map<string, MemoFile>, b: Map<string, MemoFile>): boolean {
  if (a.size !== b.size) return false;
  for (const [path, f] of a) {
    const g = b.get(path);
    if (!g || g.stamp !== f.stamp || Object.keys(g.parsed).join("\0") !== Object.keys(f.parsed).join("\0")) return false;
  }
  return true;
}

const isString = (x: unknown): x is string => typeof x === "string";

function isMemoFile(x: unknown): x is MemoFile {
  const f = x as MemoFile;
  if (typeof f !== "object" || f === null || !isString(f.stamp) || !f.stamp || !isString(f.text) || typeof f.parsed !== "object" || f.parsed === null) return false;
  return Object.values(f.parsed).every((p) => p === null || isParsed(p));
}

function isParsed(p: ParsedFile): boolean {
  if (typeof p !== "object" || !Array.isArray(p.entries) || !Array.isArray(p.sections) || !p.sections.every(isString) || typeof p.worktreeConfig !== "boolean") return false;
  return p.entries.every(
    (e) =>
      typeof e === "object" &&
      e !== null &&
      isString(e.section) &&
      isString(e.key) &&
      (e.subsection === null || isString(e.subsection)) &&
      (e.value === null || isString(e.value)) &&
      typeof e.unreadable === "boolean" &&
      (e.raw === undefined || isString(e.raw)),
  );
}
