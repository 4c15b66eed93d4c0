// The loose refs of one flat folder (refs/handoff/tasks/, one file per ref) kept in process and
// followed by a file system watch, so a long-running process lists 10,000 refs without reading
// 10,000 files: after the first walk it re-reads only the files the watch names. git replaces a
// loose ref by renaming `<ref>.lock` over it, and every such rename is an event naming the ref.
//
// A watch can in principle drop events (a full kernel queue; libuv drops the overflow notice, so
// a process cannot know), so the folder is read again in full now and then (FULL_EVERY_MS), in the
// background between requests (an audit: what it finds different is read again by the next
// listing, never taken from the audit itself), when the watch fails (at once), and whenever the
// folder holds a sub-folder (a layout this fast path does not follow), including one that appears
// later. This process's own writes are marked at once (`touch`), without waiting for their events.
import { readdirSync, statSync, watch, type FSWatcher } from "node:fs";
import { QuietTrigger } from "./quiet-trigger.ts";

/** Two listings of refs (name -> oid) hold the same refs at the same values. */
export function sameRefs(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, oid] of a) if (b.get(name) !== oid) return false;
  return true;
}

function isFolder(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

/** How a caller reads one loose ref file: undefined when there is none (`listed`: a folder listing just named it). */
export type LooseReader = (name: string, listed?: boolean) => string | null | undefined;
/** How a caller walks the folder in full: every loose ref under it, and whether it has sub-folders. */
export type LooseWalker = (dirRef: string) => { refs: Map<string, string>; nested: boolean };

const FULL_EVERY_MS = 10_000;
/** Refs an audit reads at a time (~4 ms here). */
const AUDIT_CHUNK = 256;
/** An audit's next chunk waits for this long without a listing (a request under way lists first)... */
const AUDIT_QUIET_MS = 20;
/** ...but no longer than this: a process never quiet still audits, a chunk a second. */
const AUDIT_MAX_WAIT_MS = 1000;

export class WatchedRefFolder {
  private watcher: FSWatcher | null = null;
  private loose: Map<string, string> | null = null;
  /** What the last full walk found. */
  private walked: Map<string, string> | null = null;
  private dirty = new Set<string>();
  private walkedAt = 0;
  private broken = false;
  /** The folder's inode when the watch began: a folder removed and made again is a new one. */
  private ino = -1;
  /** Changes whenever the listing may have changed, so callers can keep what they derived from it. */
  version = 0;
  /** The names read again by the last listing that applied events, and the version it made. */
  private applied: { version: number; names: string[] } | null = null;

  /** The audit under way (`auditStep`), or null. */
  private audit: { names: string[] | null; at: number; seen: Map<string, string>; started: number; stepped: number } | null = null;
  private readonly auditTrigger: QuietTrigger;

  constructor(
    private readonly commonDir: string,
    /** e.g. `refs/handoff/tasks` (no trailing slash). */
    private readonly dirRef: string,
    private readonly readLoose: LooseReader,
    private readonly walk: LooseWalker,
    private readonly clock: () => number = Date.now,
    /**
     * How long the process must be quiet before the audit's next step. A test that lists back to
     * back to hold the audit off asks for longer: a loaded machine pauses a runnable process for
     * 20 ms often, and that pause is quiet to the audit as any other.
     */
    auditQuietMs = AUDIT_QUIET_MS,
  ) {
    this.auditTrigger = new QuietTrigger(() => this.auditStep(), auditQuietMs);
  }

  /** This process changed these refs: read them again on the next listing. */
  touch(names: Iterable<string>): void {
    for (const n of names) if (n.startsWith(this.dirRef + "/")) this.dirty.add(n.slice(this.dirRef.length + 1));
  }

  /**
   * Every loose ref of the folder by full name. Events already delivered to this process are
   * applied; the caller first lets pending ones arrive (Store.listRefs yields to the event loop).
   */
  list(): Map<string, string> {
    if (!this.loose || this.broken || this.inode() !== this.ino) return this.full();
    // The periodic look for dropped events runs between requests: read in full on a listing's
    // path it cost the first call after every ten quiet seconds 120-170 ms at 10,000 refs, and
    // chunks run at every turn of the event loop still took 6 ms of a claim at that size.
    if (!this.audit && this.clock() - this.walkedAt > FULL_EVERY_MS) {
      this.audit = { names: null, at: 0, seen: new Map(), started: this.clock(), stepped: this.clock() };
    }
    if (this.audit) {
      if (this.clock() - this.audit.stepped > AUDIT_MAX_WAIT_MS) {
        this.audit.stepped = this.clock(); // one chunk, however many listings come before it runs
        setImmediate(() => this.auditStep()).unref();
      } else this.auditTrigger.poke();
    }
    if (this.dirty.size) {
      this.version++;
      this.applied = { version: this.version, names: [...this.dirty].map((file) => `${this.dirRef}/${file}`) };
    }
    for (const file of this.dirty) {
      const name = `${this.dirRef}/${file}`;
      const value = file.endsWith(".lock") ? undefined : this.readLoose(name);
      if (value) this.loose.set(name, value);
      // A sub-folder appeared (refs/handoff/ after `git pack-refs` removed its emptied folders,
      // then a write made refs/handoff/tasks/ again): the watch sees only the folder's name, not
      // the refs inside it, so this layout is walked in full from now on.
      else if (value === undefined && isFolder(`${this.commonDir}/${name}`)) return this.full();
      else this.loose.delete(name);
    }
    this.dirty.clear();
    return this.loose;
  }

  /**
   * The refs that may have changed between listing `version` and the current one, when the one
   * step between them applied events; null when it was a full walk or more than one step (the
   * caller then rebuilds from the listing).
   */
  changedSince(version: number): string[] | null {
    if (this.version === version) return [];
    return this.applied && this.applied.version === this.version && version === this.version - 1 ? this.applied.names : null;
  }

  private inode(): number {
    try {
      return statSync(`${this.commonDir}/${this.dirRef}`).ino;
    } catch {
      return -1;
    }
  }

  /**
   * One chunk of the audit: the folder's names first, then AUDIT_CHUNK ref files at a time, each
   * once the process is quiet. At the end it marks for reading again (as a watch event would)
   * every ref the listing holds at another value, or holds and the folder no longer has, or
   * lacks: the next listing reads those, so an event that came meanwhile is never undone by what
   * the audit read before it. A sub-folder found makes the next listing walk in full.
   */
  private auditStep(): void {
    const audit = this.audit;
    if (!audit || !this.loose) return; // closed, or walked in full meanwhile
    audit.stepped = this.clock();
    if (!audit.names) {
      try {
        audit.names = readdirSync(`${this.commonDir}/${this.dirRef}`);
      } catch {
        this.loose = null;
        this.audit = null;
        return;
      }
      this.auditTrigger.poke();
      return;
    }
    const end = Math.min(audit.names.length, audit.at + AUDIT_CHUNK);
    for (; audit.at < end; audit.at++) {
      const file = audit.names[audit.at]!;
      if (file.endsWith(".lock")) continue;
      const name = `${this.dirRef}/${file}`;
      const value = this.readLoose(name, true);
      if (value) audit.seen.set(name, value);
      else if (value === undefined && isFolder(`${this.commonDir}/${name}`)) {
        this.loose = null;
        this.audit = null;
        return;
      }
    }
    if (audit.at < audit.names.length) {
      this.auditTrigger.poke();
      return;
    }
    for (const [name, value] of audit.seen) if (this.loose.get(name) !== value) this.dirty.add(name.slice(this.dirRef.length + 1));
    for (const name of this.loose.keys()) if (!audit.seen.has(name)) this.dirty.add(name.slice(this.dirRef.length + 1));
    this.walkedAt = audit.started;
    this.audit = null;
  }

  private full(): Map<string, string> {
    this.audit = null;
    if (this.watcher && this.inode() !== this.ino) this.drop();
    this.ensureWatch();
    this.dirty.clear();
    const { refs, nested } = this.walk(this.dirRef);
    // A folder with sub-folders is walked at every listing: when the walk finds what the last one
    // did (the usual case once sync has packed the refs), the version stays, so callers keep the
    // listing they derived from it instead of rebuilding thousands of entries.
    if (!this.walked || !sameRefs(this.walked, refs)) {
      this.version++;
      this.applied = null;
    }
    this.walked = refs;
    this.walkedAt = this.clock();
    // A folder with sub-folders is walked in full every time: the watch sees only its own entries.
    this.loose = nested || !this.watcher ? null : refs;
    return refs;
  }

  private ensureWatch(): void {
    if (this.watcher || this.broken) return;
    try {
      const ino = this.inode();
      const w = watch(`${this.commonDir}/${this.dirRef}`, { persistent: false });
      this.ino = ino;
      w.on("change", (_type, file) => {
        if (typeof file === "string" && file) this.dirty.add(file);
        else this.loose = null; // an event without a name: walk again
      });
      w.on("error", () => this.drop());
      this.watcher = w;
    } catch {
      // No folder yet (no task written so far) or no watch available: walk in full; retry later.
      this.watcher = null;
    }
  }

  private drop(): void {
    this.watcher?.close();
    this.watcher = null;
    this.loose = null;
  }

  close(): void {
    this.broken = true;
    this.audit = null;
    this.auditTrigger.cancel();
    this.drop();
  }
}
