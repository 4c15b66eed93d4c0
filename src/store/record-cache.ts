// Decoded task records on disk for one-shot processes: `.git/handoff/tasks.cache`, one line per
// record, `<commit id>\t<record as JSON>`. A commit id names its content, so a line is the record
// of that commit for ever; a one-shot `task list` or `claim --next` over 10,000 tasks then parses
// 10,000 short JSON lines instead of reading, inflating and validating 30,000 objects. Only
// records that passed validation are written; a torn or foreign line is ignored and read again
// from git. A cache keyed by ref tips (DESIGN: thrown away and rebuilt at will).
import { readSmallFile, writeSmallFile } from "./small-file.ts";

/** Lines kept at most; past it, only the records this process used are kept. */
const MAX_LINES = 50_000;

export class RecordCache {
  private lines: Map<string, string> | null = null;
  private readonly used = new Set<string>();
  private added = 0;

  constructor(private readonly path: string) {}

  private load(): Map<string, string> {
    if (this.lines) return this.lines;
    const lines = new Map<string, string>();
    const text = readSmallFile(this.path);
    if (text) {
      for (const line of text.split("\n")) {
        const tab = line.indexOf("\t");
        if (tab > 0) lines.set(line.slice(0, tab), line.slice(tab + 1));
      }
    }
    return (this.lines = lines);
  }

  /** The record cached for `oid`, or undefined. */
  get(oid: string): unknown {
    const line = this.load().get(oid);
    if (line === undefined) return undefined;
    try {
      const record = JSON.parse(line) as unknown;
      this.used.add(oid);
      return record;
    } catch {
      this.lines!.delete(oid);
      return undefined;
    }
  }

  /** A record just read and validated from git. */
  put(oid: string, record: unknown): void {
    this.load().set(oid, JSON.stringify(record));
    this.used.add(oid);
    this.added++;
  }

  /** Writes the file when this process added records (best effort, replaced by rename). */
  flush(): void {
    if (!this.added || !this.lines) return;
    let keep = [...this.lines];
    if (keep.length > MAX_LINES) keep = keep.filter(([oid]) => this.used.has(oid));
    writeSmallFile(this.path, keep.map(([oid, json]) => `${oid}\t${json}`).join("\n") + "\n");
    this.added = 0;
  }
}
