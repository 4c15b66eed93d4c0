import { closeSync, mkdir, open, readdir, rmSync } from "node:fs";
import { QUIET_MS, QuietTrigger } from "./quiet-trigger.ts";
import { pipeline } from "./fill-pipeline.ts";
import { uniqueSuffix } from "./unique-name.ts";

/** An empty temp object file made ahead of need, open for writing. */
export interface TempFile {
  path: string;
  fd: number;
}

/**
 * Temp object files created ahead of need, for long-running processes. Creating a file (a new
 * inode) is the one slow step of writing a loose object on a busy disk (1-3 ms here when other
 * processes write, against ~50 us for the write and the rename that follow), so a long-running
 * process creates a few in the background, on libuv's thread pool, and a write takes one.
 * They are named and placed as git names its own temp objects (`objects/xx/tmp_obj_*`): git
 * fsck ignores them and `git prune` removes any a crash leaves behind. The fan-out folders are
 * made in the background too, once, so that no write waits for a `mkdir`.
 */
export class TempFiles {
  private ready: TempFile[] = [];
  private filling = false;
  private refillSoon = false;
  /** Fan-out folders known to exist (a pruned one is made again when a rename needs it). */
  private readonly dirs = new Set<string>();
  private fanOutsMade = false;
  private closed = false;

  /** Refills the pool once the process is quiet (quiet-trigger.ts). */
  private readonly quiet: QuietTrigger;

  constructor(
    private readonly objectsDir: string,
    private readonly size = 96,
    quietMs = QUIET_MS,
  ) {
    this.quiet = new QuietTrigger(() => this.fill(), quietMs);
  }

  /**
   * A temp file ready for writing, or null (none made yet). More are made once the process is
   * quiet, or as soon as the caller waits for something when the pool runs low: even handing
   * work to the thread pool costs ~0.15 ms on a loaded machine.
   */
  take(): TempFile | null {
    const t = this.ready.pop() ?? null;
    if (this.ready.length > this.size / 4) this.quiet.poke();
    else if (!this.refillSoon && !this.filling) {
      this.refillSoon = true;
      setImmediate(() => {
        this.refillSoon = false;
        this.fill();
      }).unref();
    }
    return t;
  }

  close(): void {
    this.closed = true;
    this.quiet.cancel();
    for (const t of this.ready.splice(0)) {
      try {
        closeSync(t.fd);
      } catch {
        /* already closed */
      }
      rmSync(t.path, { force: true });
    }
  }

  /** Makes temp files up to the pool size, in the background. */
  fill(): void {
    if (this.filling || this.closed) return;
    this.filling = true;
    void this.fillUp().finally(() => (this.filling = false));
  }

  private async fillUp(): Promise<void> {
    try {
      await this.topUp();
      if (!this.fanOutsMade) {
        this.fanOutsMade = true;
        await this.makeFanOuts();
        await this.topUp();
      }
    } catch {
      // A full disk or a read-only folder: writes then make their own temp files and say why.
    }
  }

  private async topUp(): Promise<void> {
    // Several at once, each finished one starting the next (fill-pipeline.ts).
    await pipeline(PARALLEL, (running) => !this.closed && this.ready.length + running < this.size, () => this.makeOne()).catch(() => {
      throw new Error("temp files cannot be made here");
    });
  }

  private async makeOne(): Promise<void> {
    const dir = `${this.objectsDir}/${Math.floor(Math.random() * 256).toString(16).padStart(2, "0")}`;
    if (!this.dirs.has(dir)) {
      await call<void>((cb) => mkdir(dir, (e) => cb(e && e.code !== "EEXIST" ? e : null)));
      this.dirs.add(dir);
      if (this.closed) return; // closed meanwhile: make nothing more for a writer that is gone
    }
    const path = `${dir}/tmp_obj_${uniqueSuffix()}`;
    const create = () => call<number>((cb) => open(path, "wx", 0o444, cb));
    const fd = await create().catch(async (e: NodeJS.ErrnoException) => {
      if (e.code !== "ENOENT") throw e;
      // `git prune` removed the (empty) folder meanwhile: make it again.
      await call<void>((cb) => mkdir(dir, (m) => cb(m && m.code !== "EEXIST" ? m : null)));
      return create();
    });
    if (this.closed) {
      closeSync(fd);
      rmSync(path, { force: true });
      return;
    }
    this.ready.push({ path, fd });
  }

  /** Every missing fan-out folder, one after the other (git makes them on first use; prune removes empty ones). */
  private async makeFanOuts(): Promise<void> {
    const present = new Set(await call<string[]>((cb) => readdir(this.objectsDir, cb)));
    for (let i = 0; i < 256 && !this.closed; i++) {
      // Writes go on meanwhile: keep temp files ready between folders.
      if (this.ready.length < this.size / 2) await this.topUp();
      const name = i.toString(16).padStart(2, "0");
      if (!present.has(name)) await call<void>((cb) => mkdir(`${this.objectsDir}/${name}`, (e) => cb(e && e.code !== "EEXIST" ? e : null)));
      this.dirs.add(`${this.objectsDir}/${name}`);
    }
  }
}

const PARALLEL = 8;

function call<T>(f: (cb: (e: NodeJS.ErrnoException | null, v?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => f((e, v) => (e ? reject(e) : resolve(v as T))));
}
