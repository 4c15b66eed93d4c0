// The whole task listing of a one-shot view over many tasks, in one file named by the task refs it
// was read from: `.git/handoff/listing-<digest>.json`, the records in listing order. A view such
// as `status` at 10,000 tasks then parses one JSON array instead of looking up, parsing and
// sorting 10,000 cached lines (record-cache.ts). The digest covers every task ref and its commit,
// so the file is the listing of exactly those tips, for ever; any ref that moved names another
// file, and the slower path reads the records (and writes the new file, dropping the old one).
// Only views write it (store.keepsRecords), only past LISTING_AT tasks, only listings without
// problems. Beside it, `listing-<digest>.view.json` holds what a text view reads: the tasks that
// are not final and the final ones a view can show (viewPart in task-listing.ts), and the counts
// of the others, so a view does not grow with history. A cache keyed by ref tips (DESIGN: thrown
// away and rebuilt at will).
import { createHash } from "node:crypto";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { RefTip } from "../git/refs.ts";
import { isFinal, type Task, type TaskStatus } from "../core/task.ts";
import { readSmallFile, writeSmallFile } from "./small-file.ts";

/** Below this many tasks the per-record cache is quick enough: no listing file. */
export const LISTING_AT = 500;
const VERSION = 1;
const PREFIX = "listing-";

export class ListingSnapshot<T> {
  private constructor(
    private readonly dir: string,
    private readonly name: string,
  ) {}

  /** The snapshot of these tips (sorted by name, as listed), or null when too few to bother. */
  static of<T>(commonDir: string, tips: readonly RefTip[]): ListingSnapshot<T> | null {
    if (tips.length < LISTING_AT) return null;
    // One string hashed at once: 10,000 calls of update() cost more than the hashing itself.
    let text = `v${VERSION}\n`;
    for (const t of tips) text += `${t.name} ${t.oid}\n`;
    const digest = createHash("sha256").update(text).digest("hex").slice(0, 40);
    return new ListingSnapshot<T>(join(commonDir, "handoff"), `${PREFIX}${digest}.json`);
  }

  /** The records of these tips, or null (no file, or a damaged or foreign one). */
  read(count: number): T[] | null {
    const path = join(this.dir, this.name);
    if (!existsSync(path)) return null;
    try {
      const read = JSON.parse(readSmallFile(path) ?? "null") as { version?: number; tasks?: unknown } | null;
      if (read?.version !== VERSION || !Array.isArray(read.tasks) || read.tasks.length !== count) return null;
      return read.tasks as T[];
    } catch {
      return null;
    }
  }

  /** The view part of these tips (see viewPart), or null. */
  readView<V extends { tasks: T[] }>(count: number): V | null {
    const path = join(this.dir, this.viewName);
    if (!existsSync(path)) return null;
    try {
      const read = JSON.parse(readSmallFile(path) ?? "null") as ({ version?: number; count?: number } & V) | null;
      if (read?.version !== VERSION || read.count !== count || !Array.isArray(read.tasks)) return null;
      return read;
    } catch {
      return null;
    }
  }

  /** Best effort: writes the view part of a listing of `count` tasks. */
  saveView(count: number, view: object): void {
    writeSmallFile(join(this.dir, this.viewName), JSON.stringify({ version: VERSION, count, ...view }));
  }

  private get viewName(): string {
    return this.name.replace(/\.json$/, ".view.json");
  }

  /** Best effort: writes the listing and its view part, and removes the listings of earlier tips. */
  save(tasks: readonly T[], view: object): void {
    writeSmallFile(join(this.dir, this.name), JSON.stringify({ version: VERSION, tasks }));
    this.saveView(tasks.length, view);
    try {
      for (const f of readdirSync(this.dir)) if (f.startsWith(PREFIX) && f !== this.name && f !== this.viewName && f.endsWith(".json")) rmSync(join(this.dir, f), { force: true });
    } catch {
      /* an old listing left behind is only disk space */
    }
  }
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
