// A text derived from the refs under a folder of refs/ (the event index's stamp, the loose task
// refs a view reads), kept with the stats of that folder and the folders under it, and taken from
// the record while they stand, without a ref file read. Taking the text reads every loose ref file
// (a few hundred between two packs: ~3 ms of a cold `events --agent X --limit 20` or `status`),
// while a ref is written by renaming a new file over it (git's files backend,
// loose-ref-writer.ts) or removed, either of which gives its folder a new change time; and a ref
// only in packed-refs moves with packed-refs' identity (a new file renamed over it), recorded too.
//
// Sound only if every move after the record's stats changes them. A move's change time is the
// file system's clock, which is coarse (a few ms; a second on some file systems): a move in the same
// tick as a folder's last change can leave its time as it was. So the file system's time is taken
// first (a file made beside the record, on the same device), then the stats, then the text, and
// the record is written only when every folder and packed-refs last changed before that time:
// every move after it is given a later one. A ref file written over in place (by hand, not as
// git writes) changes no folder: it is not seen until a move.
import { closeSync, fstatSync, openSync, readdirSync, renameSync, statSync, writeSync, type Stats } from "node:fs";
import { basename, dirname, join } from "node:path";
import { isFolder, readTextNoFollow, tempBeside, unlinkQuiet } from "../git/safe-file.ts";

/** The record's first line: a record of another layout reads as none. */
const HEADER = "ref-folders 1";

type FolderStats = (Stats | undefined)[];

const statsOf = (refDir: string, folders: string[]): FolderStats => folders.map((f) => statQuiet(join(refDir, f)));

/** A stat, or undefined for anything not there (a file where a folder was named included). */
function statQuiet(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** The folders' stats (a folder not there as `-`), then packed-refs' identity, as one text. */
function statsText(folders: string[], stats: FolderStats, packed: Stats | undefined): string {
  const lines = folders.map((f, i) => {
    const st = stats[i];
    return st?.isDirectory() ? `${f}\t${st.dev} ${st.ino} ${st.ctimeMs} ${st.mtimeMs}` : `${f}\t-`;
  });
  lines.push(packed ? `packed-refs\t${packed.ino} ${packed.mtimeMs} ${packed.size}` : "packed-refs\t-");
  return lines.join("\n");
}

const packedOf = (refDir: string) => statQuiet(join(refDir, "packed-refs"));

/**
 * The text recorded at `path` for the ref folders of `refDir` as they are now; null when none is
 * recorded, or they changed since (the caller takes the text itself, through `recordText`).
 */
export function recordedText(path: string, refDir: string): string | null {
  const text = ownFolders(dirname(path)) ? readTextNoFollow(path) : null;
  // The header, the stats' lines, an empty line, the text.
  const end = text?.indexOf("\n\n") ?? -1;
  if (end < 0 || !text!.startsWith(`${HEADER}\n`)) return null;
  const recorded = text!.slice(HEADER.length + 1, end);
  const folders: string[] = [];
  for (const line of recorded.split("\n")) {
    const name = line.slice(0, line.indexOf("\t"));
    if (name !== "packed-refs") folders.push(name);
  }
  return statsText(folders, statsOf(refDir, folders), packedOf(refDir)) === recorded ? text!.slice(end + 2) : null;
}

/**
 * `take()`, a text of the refs under `root` (a folder of `refDir`), recorded at `path` with the
 * stats of `root`'s folders from before it was taken, where that is sound (see above) and the
 * record's folder is there.
 */
export function recordText(path: string, refDir: string, root: string, take: () => string): string {
  const tmp = tempBeside(path);
  let fd: number;
  let now: Stats;
  try {
    if (!ownFolders(dirname(path))) return take();
    fd = openSync(tmp, "wx");
    now = fstatSync(fd);
  } catch {
    return take(); // no folder for the record yet, or one that cannot be written
  }
  try {
    const folders = folderTree(refDir, root);
    const stats = statsOf(refDir, folders);
    const packed = packedOf(refDir);
    const text = statsText(folders, stats, packed);
    const taken = take();
    // A folder (or packed-refs, replaced by rename: a new file) changed in the file system's tick or
    // later, or on another device: a move after the stats could leave them as they are.
    if ([...stats, packed].every((st) => !st || (st.ctimeMs < now.ctimeMs && st.mtimeMs < now.ctimeMs && st.dev === now.dev))) {
      try {
        writeSync(fd, `${HEADER}\n${text}\n\n${taken}`);
        const written = fd;
        fd = -1;
        closeSync(written);
        renameSync(tmp, path);
      } catch {
        // not recorded: the next reader takes the text again
      }
    }
    return taken;
  } finally {
    if (fd >= 0) closeSync(fd);
    unlinkQuiet(tmp);
  }
}

/** `root` and every folder under it (relative to `refDir`), as they are now. */
function folderTree(refDir: string, root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    out.push(rel);
    let entries;
    try {
      entries = readdirSync(join(refDir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) if (e.isDirectory()) walk(`${rel}/${e.name}`);
  };
  walk(root);
  return out;
}

/**
 * Whether `dir` and every folder above it up to the state folder (`<git dir>/handoff`) are folders
 * themselves, none a link: a record is never read or written through a link (git/safe-file.ts).
 */
function ownFolders(dir: string): boolean {
  for (let d = dir; isFolder(d) && dirname(d) !== d; d = dirname(d)) if (basename(d) === "handoff") return true;
  return false;
}
