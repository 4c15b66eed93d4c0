// The whole task listing of a one-shot view over many tasks, in one file named by the task refs it
// was read from: `.git/handoff/listing-<digest>.json`, the records in listing order. A view such
// as `status` at 10,000 tasks then parses one JSON array instead of looking up, parsing and
// sorting 10,000 cached lines (record-cache.ts). The file is named by a quick hash of every task
// ref and its commit and holds that list itself, as lines before the JSON: a reader uses it only
// when the list is exactly the current tips (a strong digest would cost node:crypto's load, more
// than the compare), so the file is the listing of exactly those tips, for ever; any ref that
// moved names another file, and the slower path reads the records (and writes the new file,
// dropping the old one).
// Only views write it (store.keepsRecords), only past LISTING_AT tasks, only listings without
// problems. Beside it, `listing-<digest>.view.json` holds what a text view reads: the tasks that
// are not final and the final ones a view can show (viewPart in task-listing.ts), and the counts
// of the others, so a view does not grow with history. A cache keyed by ref tips (DESIGN: thrown
// away and rebuilt at will).
import { readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { RefTip } from "../git/refs.ts";
import { isFinal, type Task, type TaskStatus } from "../core/task.ts";
import { writeSmallFile } from "./small-file.ts";
import { FNV_BASIS, fnv1a32Pair, hex32 } from "../core/fnv.ts";

/** Below this many tasks the per-record cache is quick enough: no listing file. */
export const LISTING_AT = 500;
const VERSION = 3;
const PREFIX = "listing-";

export class ListingSnapshot<T> {
  private constructor(
    private readonly dir: string,
    private readonly name: string,
    /** Every task ref and its commit, one a line: what the file must hold to be used. */
    private readonly tips: string,
  ) {}

  private tipBytes: Buffer | null = null;

  /** The snapshot of these tips (sorted by name, as listed), or null when too few to bother. */
  static of<T>(commonDir: string, tips: readonly RefTip[]): ListingSnapshot<T> | null {
    if (tips.length < LISTING_AT) return null;
    let text = "";
    for (const t of tips) text += `${t.name} ${t.oid}\n`;
    return new ListingSnapshot<T>(join(commonDir, "handoff"), `${PREFIX}${quickHash(text)}.json`, text);
  }

  /** The records of these tips, or null (no file, a damaged or foreign one, or one of other tips). */
  read(count: number): T[] | null {
    const read = this.readFile<{ tasks?: unknown }>(this.name);
    return read && Array.isArray(read.tasks) && read.tasks.length === count ? (read.tasks as T[]) : null;
  }

  /** The view part of these tips (see viewPart), or null. */
  readView<V extends { tasks: T[] }>(count: number): V | null {
    const read = this.readFile<{ count?: number } & V>(this.viewName);
    return read && read.count === count && Array.isArray(read.tasks) ? read : null;
  }

  /** Best effort: writes the view part of a listing of `count` tasks. */
  saveView(count: number, view: object): void {
    this.writeFile(this.viewName, { count, ...view });
  }

  /**
   * A file is the tips it was read from, one a line, then the JSON of what was read: the tips are
   * compared as bytes before anything is parsed (at 10,000 tasks they are 680 KB, which inside the
   * JSON cost a string to decode and compare), and a file of other tips is never parsed at all.
   */
  private readFile<R>(name: string): (R & { version?: number }) | null {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(this.dir, name));
    } catch {
      return null;
    }
    const tips = (this.tipBytes ??= Buffer.from(this.tips));
    if (bytes.length <= tips.length || bytes.compare(tips, 0, tips.length, 0, tips.length) !== 0 || bytes[tips.length] !== 0x7b) return null;
    try {
      const read = JSON.parse(bytes.toString("utf8", tips.length)) as (R & { version?: number }) | null;
      return read?.version === VERSION ? read : null;
    } catch {
      return null;
    }
  }

  private writeFile(name: string, body: object): void {
    writeSmallFile(join(this.dir, name), this.tips + JSON.stringify({ version: VERSION, ...body }));
  }

  private get viewName(): string {
    return this.name.replace(/\.json$/, ".view.json");
  }

  /** Best effort: writes the listing and its view part, and removes the listings of earlier tips. */
  save(tasks: readonly T[], view: object): void {
    this.writeFile(this.name, { tasks });
    this.saveView(tasks.length, view);
    try {
      for (const f of readdirSync(this.dir)) if (f.startsWith(PREFIX) && f !== this.name && f !== this.viewName && f.endsWith(".json")) rmSync(join(this.dir, f), { force: true });
    } catch {
      /* an old listing left behind is only disk space */
    }
  }
}

/** Two FNV-1a hashes of `text` (different offset bases) in hex: a file name, checked by content. */
function quickHash(text: string): string {
  // Both in one pass over the text (10,000 tips are 680,000 characters).
  const [a, b] = fnv1a32Pair(text, FNV_BASIS, FNV_BASIS ^ 0x9e3779b9);
  return hex32(a) + hex32(b);
}

/** What a text view reads of a listing: the tasks it can show, in listing order, and the count of the others by status. */
export interface ViewPart {
  tasks: Task[];
  counted: Partial<Record<TaskStatus, number>>;
}

/**
 * The tasks a text view can show: every task not final, and the final ones it may still name (a
 * task not final waits on it; it carries handoffs, which fill inboxes). The other final tasks,
 * history, are only counted. A file lease naming a task left out is the caller's to check.
 */
export function viewPart(tasks: readonly Task[]): ViewPart {
  const named = new Set<string>();
  for (const t of tasks) if (!isFinal(t.status)) for (const dep of t.after ?? []) named.add(dep);
  const kept: Task[] = [];
  const counted: Partial<Record<TaskStatus, number>> = {};
  for (const t of tasks) {
    if (!isFinal(t.status) || t.handoffs?.length || named.has(t.id)) kept.push(t);
    else counted[t.status] = (counted[t.status] ?? 0) + 1;
  }
  return { tasks: kept, counted };
}
