// Decoded records by commit id, kept between one-shot commands in .git/handoff/records.json, so a
// view over 1,000 tasks does not read and validate 3,000 objects on every call. A commit never
// changes, so an entry never goes stale (DESIGN: a cache keyed by ref tips, thrown away at will).
// A run that read many records (a listing) saves just those: the file follows the current tips
// instead of growing with history. A run that read few adds them to what is there.
import { join } from "node:path";
import { readSmallFile, writeSmallFile } from "./small-file.ts";

// Its records are taken without their schemas' check: bumped with any change of the schemas of the
// records views read through Store.record besides the task's (test/cache-formats.test.ts).
export const RECORDS_FILE_VERSION = 1;
/** From this many records a run counts as a listing: its set replaces the file's. */
const LISTING = 100;

/**
 * Where the views that read records only for their caller (events, stats: its agent record, for
 * the heartbeat) keep them: not in records.json, which holds a whole listing (57 KB at 1,000 tasks
 * once `status` ran), parsed whole for the one record (~1.8 ms and 190 KB of young generation, a
 * collection, in a cold `events --agent X --limit 20`). A few callers' records, each at its latest
 * tips; past `cap` only the run's own are kept, so the file follows the tips instead of growing
 * with every heartbeat.
 */
export const CALLER_RECORDS = { name: "caller-records.json", cap: 32 };

export class RecordCacheFile {
  private stored: Map<string, unknown> | null = null;
  private readonly used = new Map<string, unknown>();
  private added = false;

  constructor(
    private readonly path: string,
    private readonly cap = Infinity,
  ) {}

  static in(commonDir: string, file: { name: string; cap: number } = { name: "records.json", cap: Infinity }): RecordCacheFile {
    return new RecordCacheFile(join(commonDir, "handoff", file.name), file.cap);
  }

  get(key: string): unknown {
    const hit = this.load().get(key);
    if (hit !== undefined) this.used.set(key, hit);
    return hit;
  }

  set(key: string, record: unknown): void {
    this.used.set(key, record);
    this.added = true;
  }

  save(): void {
    if (!this.added) return;
    const merged = this.used.size >= LISTING ? this.used : new Map([...this.load(), ...this.used]);
    const keep = merged.size > this.cap ? this.used : merged;
    writeSmallFile(this.path, JSON.stringify({ version: RECORDS_FILE_VERSION, records: Object.fromEntries(keep) }));
  }

  private load(): Map<string, unknown> {
    if (this.stored) return this.stored;
    this.stored = new Map();
    try {
      const read = JSON.parse(readSmallFile(this.path) ?? "null") as { version: number; records: Record<string, unknown> } | null;
      if (read?.version === RECORDS_FILE_VERSION && read.records && typeof read.records === "object") this.stored = new Map(Object.entries(read.records));
    } catch {
      /* damaged: read the objects again */
    }
    return this.stored;
  }
}
