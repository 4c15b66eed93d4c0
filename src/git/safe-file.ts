// Files this tool keeps under .git/handoff/ (caches, locks, queues, stamps), read and written
// without ever following a symbolic link there. In a shared repository (core.sharedRepository)
// other users can write that folder, and a link planted at a cache's name made a read-only
// command truncate and refill, or append to, whatever file the link named, with the rights of the
// user who ran it (root's included); a link in place of a folder made it delete that folder's
// files. Here:
// - a new file is created with O_EXCL, which fails on any link (dangling or not), and renamed over
//   the name it replaces: rename(2) replaces a link itself, never the file it names;
// - an append or a read opens with O_NOFOLLOW: a link there is a damaged cache, removed (append)
//   or read as no cache (read). Costs nothing: a flag on the open every such call makes anyway;
// - a folder is lstat'ed before anything is listed, removed or created in it (where a mkdir and a
//   stat used to make sure it was there): a link or a file in its place is removed and the folder
//   made anew. Only the state folder itself (`handoff` in a git dir) as a file is refused, as a
//   person's doing, not removed: it held only caches, and they are told to move it away.
// Every open also carries O_NONBLOCK: a FIFO at a cache's name would hang it (a write's open fails
// at once instead, a read finds nothing); a regular file ignores the flag.
import { closeSync, constants, fstatSync, futimesSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, unlinkSync, writeFileSync, type Stats } from "node:fs";
import { basename, dirname } from "node:path";
import { HandoffError } from "../core/errors.ts";
import { uniqueSuffix } from "./unique-name.ts";

const { O_RDONLY, O_WRONLY, O_APPEND, O_CREAT } = constants;
// Not on every platform (Windows has no links of this kind to fear).
const NOFOLLOW = (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
/** open(2)'s flags of a read that never follows a link nor waits on a FIFO (ref-text.ts reads listed refs so too). */
export const READ_NOFOLLOW = O_RDONLY | NOFOLLOW;
/** The same, as readFileSync's `flag`: Node takes the number there too; its types name only the string forms. */
export const READ_NOFOLLOW_FLAG = READ_NOFOLLOW as unknown as string;

/** A descriptor of the file at `path` open for reading, never through a link; throws as openSync does (ELOOP for a link). */
export function openNoFollow(path: string): number {
  return openSync(path, O_RDONLY | NOFOLLOW);
}

/** The file's bytes, or null: none, a link, anything unreadable. */
export function readNoFollow(path: string): Buffer | null {
  return readingNoFollow(path, (fd) => readFileSync(fd));
}

/** Up to `max` bytes from the file's start, or null as readNoFollow: a head read without the rest. */
export function readStartNoFollow(path: string, max: number): Buffer | null {
  return readingNoFollow(path, (fd) => {
    const b = Buffer.allocUnsafe(max);
    return b.subarray(0, readSync(fd, b, 0, max, 0));
  });
}

function readingNoFollow(path: string, read: (fd: number) => Buffer | null): Buffer | null {
  let fd: number;
  try {
    fd = openNoFollow(path);
  } catch {
    return null;
  }
  try {
    return read(fd);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * The file's text as readTextNoFollow, or null also when it is not this user's (config-memo.ts).
 * The owner is asked of the file opened, and its bytes read with the size that stat gave (a file
 * this tool replaces by rename, never in place): readFileSync on the descriptor would stat it again.
 */
export function readOwnTextNoFollow(path: string): string | null {
  return (
    readingNoFollow(path, (fd) => {
      const st = fstatSync(fd);
      if (st.uid !== process.getuid?.()) return null;
      // Unpooled: read-at.ts readAtUnpooled says why.
      const b = Buffer.allocUnsafeSlow(st.size);
      return b.subarray(0, readSync(fd, b, 0, st.size, 0));
    })?.toString("utf8") ?? null
  );
}

/**
 * The file's text, or null, as readNoFollow. UTF-8 text is read by one call into Node (open, stat,
 * read and close in its native code, the flags as readNoFollow's): every one-shot process reads
 * git's refs that way already, and the pre-edit hook read its small caches through four calls whose
 * code ran nowhere else before it answered.
 */
export function readTextNoFollow(path: string, encoding: BufferEncoding = "utf8"): string | null {
  if (encoding !== "utf8") return readNoFollow(path)?.toString(encoding) ?? null;
  try {
    return readFileSync(path, { encoding, flag: READ_NOFOLLOW_FLAG });
  } catch {
    return null;
  }
}

/**
 * Opens `path` for writing without following a link (`flags` besides O_WRONLY and O_NOFOLLOW, e.g.
 * O_APPEND, O_CREAT). A link there is removed, then (with O_CREAT) the file is made afresh: for a
 * cache, a fresh file is a miss the next read makes good. Throws as openSync does, ENOENT for a
 * file that is not there without O_CREAT.
 */
export function openWriteNoFollow(path: string, flags: number): number {
  try {
    return openSync(path, O_WRONLY | NOFOLLOW | flags);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ELOOP") throw e;
    unlinkSync(path);
    return openSync(path, O_WRONLY | NOFOLLOW | flags);
  }
}

/**
 * Appends `data` to the file at `path` (one write with O_APPEND), made when `create` and it is not
 * there. False when it is not there and not `create`; other failures throw.
 */
export function appendNoFollow(path: string, data: string | Uint8Array, create: boolean): boolean {
  let fd: number;
  try {
    fd = openWriteNoFollow(path, O_APPEND | (create ? O_CREAT : 0));
  } catch (e) {
    if (!create && (e as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw e;
  }
  try {
    writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Creates the file at `path` with `data`, failing (EEXIST) when anything is there, a link included. */
export function createExclusive(path: string, data: string | Uint8Array, mode?: number): void {
  writeFileSync(path, data, mode === undefined ? { flag: "wx" } : { flag: "wx", mode });
}

/** A temporary file's name beside `path`, this process's own. */
export const tempBeside = (path: string) => `${path}.${process.pid}-${uniqueSuffix()}.tmp`;

/** Writes `data` to a new temporary file beside `path` and renames it over `path`; throws on failure (the temp removed). */
export function replaceFile(path: string, data: string | Uint8Array): void {
  const tmp = tempBeside(path);
  createExclusive(tmp, data);
  try {
    renameSync(tmp, path);
  } catch (e) {
    unlinkQuiet(tmp);
    throw e;
  }
}

/** Sets the file's times to `at`, making it (empty) when it is not there; a link there is replaced by a file. */
export function touchNoFollow(path: string, at: Date): void {
  const fd = openWriteNoFollow(path, O_CREAT);
  try {
    futimesSync(fd, at, at);
  } finally {
    closeSync(fd);
  }
}

export function unlinkQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* not there */
  }
}

/**
 * Makes sure `dir` is a folder of its own, not a link to one: lstat'ed, and a link, a file or
 * anything else in its place is removed and the folder made anew (its missing parents too, but
 * never the git dir a state folder sits in: makeParents). A file in place of the state folder
 * itself is refused instead (stateFolderRefusal), not removed. Throws on failure.
 */
export function ownFolder(dir: string): void {
  for (let n = 0; ; n++) {
    let st: Stats | undefined;
    try {
      st = lstatSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
    if (st?.isDirectory()) return;
    if (st) {
      if (isStateFolder(dir) && !st.isSymbolicLink()) throw stateFolderRefusal(dir, st);
      unlinkSync(dir);
    }
    try {
      mkdirSync(dir);
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT") {
        // The state folder's parent is the git dir: gone, it is not made again here.
        if (isStateFolder(dir)) throw e;
        makeParents(dirname(dir));
        mkdirSync(dir);
        return;
      }
      // Made (or replaced) by another process meanwhile: look again, a few times at most.
      if (code !== "EEXIST" || n >= 3) throw e;
    }
  }
}

/**
 * `mkdir -p dir`, except that at and below a state folder (`<git dir>/handoff`, the nearest one
 * up) the folders are made one by one from the state folder down, each only where its parent
 * exists: the git dir is never made. A long-running process whose repository was moved or
 * removed (the MCP server's temp refill after a write, loose-ref-writer.ts) made
 * `<old path>/.git/handoff/ref-temps` again with mkdir -p, a ghost of the repository where it had
 * been (a `git clone` there then refused the folder as not empty); it now fails with ENOENT, as a
 * write there would.
 */
function makeParents(dir: string): void {
  let state = dir;
  while (!isStateFolder(state) && dirname(state) !== state) state = dirname(state);
  if (!isStateFolder(state)) {
    mkdirSync(dir, { recursive: true });
    return;
  }
  const below = dir.slice(state.length).split(/[\\/]/).filter(Boolean);
  let d = state;
  for (let i = 0; ; d = `${d}/${below[i++]}`) {
    try {
      mkdirSync(d);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    if (i === below.length) return;
  }
}

/** Whether `dir` is a folder itself (not a link to one); false when it is not there. */
export function isFolder(dir: string): boolean {
  try {
    return lstatSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** `<git dir>/handoff`, the folder every file of this module lives under. */
const isStateFolder = (dir: string) => basename(dir) === "handoff";

/**
 * The refusal for a state folder (`<git dir>/handoff`) that is not a folder, or null when it is
 * one or is not there. Asked after a failure (Store.explainFailure): one lstat, never on the way
 * of a command that works.
 */
export function stateFolderProblem(dir: string): HandoffError | null {
  let st: Stats;
  try {
    st = lstatSync(dir);
  } catch {
    return null;
  }
  return st.isDirectory() ? null : stateFolderRefusal(dir, st);
}

function stateFolderRefusal(dir: string, st: Stats): HandoffError {
  const what = st.isSymbolicLink() ? "a symbolic link" : st.isFile() ? "a file" : "not a folder";
  return new HandoffError({
    code: "corrupt_state",
    message: `${dir} is ${what}, not a folder: git-handoff keeps its locks and caches there`,
    data: { path: dir, cause: "state_folder" },
    suggestions: [{ action: "fix_input", detail: `remove or move ${dir} away (git-handoff keeps only locks and caches there, which it makes again), then run the command again` }],
  });
}
