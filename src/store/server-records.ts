// Task records the long-running servers of one clone wrote, for each other:
// `.git/handoff/server-records-<FORMAT>`, one line per record, `<commit id>\t<record as JSON>`,
// appended (one write(2) with O_APPEND) by the server that wrote the commit, before it moves the
// ref. Eight servers racing `claim_next` each read every grant of the seven others from git: three
// loose objects read and inflated, the record checked by its schema, ~14% of their main threads.
// A server that finds a listed commit here parses one short line instead.
//
// A line is a record this build's core built and wrote at that commit, which is what a read of the
// commit gives (the schemas have no defaults or transforms: Store.wroteRecord), as tasks.cache
// keeps them for one-shot commands; never a record read from elsewhere, so nothing from another
// clone skips its schema check. A commit id names its content, so a line holds for ever; a line
// of a write that lost its race names a commit no ref points at, and nobody asks for it. A line
// torn or foreign (a crash mid-write, a hand edit) is skipped and the record read from git.
// Another format of the file has another name: a build never reads another's lines. A writer that
// begins its file removes those of earlier formats (never a later one's: two builds on one clone
// each keep their own), so they neither linger nor grow.
//
// The file is read from where this process left off: a reader asks the file's size (one stat)
// and reads only what was appended since. Past MAX_BYTES the writer that finds it so removes it
// and starts a new one; readers see another inode and read it from its start.
import { fstatSync, statSync, unlinkSync, closeSync } from "node:fs";
import { isObjectId } from "../core/object-id.ts";
import { readAt } from "../git/read-at.ts";
import { appendNoFollow, openNoFollow, unlinkQuiet } from "../git/safe-file.ts";

/**
 * The format of the lines, part of the file's name: bumped with any change of what a line holds,
 * the task record's schema included (an older build would take a newer record's line unchecked).
 */
export const SERVER_RECORDS_FORMAT = 1;
/** The file of `format` (another build's, in a test) under the clone's common dir. */
export function serverRecordsFile(commonDir: string, format = SERVER_RECORDS_FORMAT): string {
  return `${commonDir}/handoff/server-records-${format}`;
}

/** Past this size a writer starts the file anew (~4,000 records of ~1 KB). */
const MAX_BYTES = 4 << 20;
/**
 * Lines kept in a process at most, read and not yet asked for (emptied past it: each is in git
 * too). A racer asks for the others' lines soon after they land; its own and those of lost races
 * are never asked for.
 */
const MAX_LINES = 4_096;

export class ServerRecords {
  /** Where this process left off in the file, and the file (its inode) that was. */
  private offset = 0;
  private ino = -1;
  /** Lines read and not yet asked for, by commit id. */
  private readonly lines = new Map<string, string>();
  constructor(private readonly path: string) {}

  /** Appends the record written at commit `oid` (best effort: a failure only costs readers a read from git). */
  note(oid: string, record: unknown): void {
    try {
      const size = statSync(this.path, { throwIfNoEntry: false })?.size;
      if (size === undefined) removeEarlier(this.path);
      else if (size > MAX_BYTES) unlinkSync(this.path);
      appendNoFollow(this.path, `${oid}\t${JSON.stringify(record)}\n`, true);
    } catch {
      // A full disk, a folder not ours to write: readers read git.
    }
  }

  /** The record another server of this clone wrote at commit `oid`, or undefined (read it from git). */
  get(oid: string): unknown {
    let line = this.lines.get(oid);
    if (line === undefined) {
      this.readOn();
      line = this.lines.get(oid);
      if (line === undefined) return undefined;
    }
    this.lines.delete(oid);
    try {
      return JSON.parse(line);
    } catch {
      return undefined;
    }
  }

  /** When the file was last found missing (ms): a lone server's listing misses every record it reads. */
  private absentAt = -1;

  /** Reads the lines appended since the last read (from the start of a new file). */
  private readOn(): void {
    // One stat, no throw (a lone server has no file), and one a millisecond while there is none.
    const now = Date.now();
    if (now === this.absentAt) return;
    const st = statSync(this.path, { throwIfNoEntry: false });
    if (!st) {
      this.absentAt = now;
      return;
    }
    if (st.ino !== this.ino) {
      this.ino = st.ino;
      this.offset = 0;
    }
    if (st.size <= this.offset) {
      this.offset = Math.min(this.offset, st.size);
      return;
    }
    let fd: number;
    try {
      fd = openNoFollow(this.path);
    } catch {
      return;
    }
    try {
      // Begun anew between the stat and the open: read at the next look.
      if (fstatSync(fd).ino !== st.ino) return;
      const bytes = readAt(fd, this.offset, st.size - this.offset);
      if (!bytes) return;
      // Only whole lines: a line being appended shows its newline last.
      const end = bytes.lastIndexOf(10);
      if (end < 0) return;
      this.offset += end + 1;
      if (this.lines.size > MAX_LINES) this.lines.clear();
      for (const line of bytes.toString("utf8", 0, end).split("\n")) {
        const tab = line.indexOf("\t");
        const oid = line.slice(0, tab);
        if (tab > 0 && isObjectId(oid)) this.lines.set(oid, line.slice(tab + 1));
      }
    } catch {
      // Unreadable now: git answers.
    } finally {
      closeSync(fd);
    }
  }
}

/** Best effort: removes the files of the formats before this one beside `path` (an unlink each, once a file). */
function removeEarlier(path: string): void {
  if (!path.endsWith(`/server-records-${SERVER_RECORDS_FORMAT}`)) return;
  const dir = path.slice(0, path.lastIndexOf("/"));
  for (let n = 1; n < SERVER_RECORDS_FORMAT; n++) unlinkQuiet(`${dir}/server-records-${n}`);
}
