// Turns at a hot ref for the long-running processes of one machine. Racing writers of one ref
// (every claim of a task with a scope moves refs/handoff/leases) mostly lose to each other: each
// reads the tip, decides, writes objects, and all but one find the tip moved and start over. A
// turn makes them queue instead, so each write succeeds at its first attempt. It is only a
// courtesy: the compare-and-swap still decides, a writer that waits past a bound goes ahead
// without its turn, and a turn whose holder is gone is broken at once (owned-lock.ts).
import { uniqueSuffix } from "./unique-name.ts";
import { existsSync, linkSync, lstatSync, readdirSync, renameSync, unlinkSync, watch, type FSWatcher } from "node:fs";
import { createExclusive, ownFolder } from "./safe-file.ts";
import { holderGone, readOwner, selfOwner, unlinkIfSame, type OwnerFile } from "./owned-lock.ts";

export interface Turn {
  give(): void;
  waited: boolean;
}

/** How long a writer waits for its turn before it goes ahead anyway. */
const MAX_WAIT_MS = 250;
/** With the folder watched, how often a waiter looks anyway (a lost event, a holder gone). */
const POLL_MS = 20;

/**
 * One process's access to the turns under `dir`. Taking a turn is a hard link of this process's
 * owner file to the turn's name (no new inode: on a busy disk creating a file is the slow part),
 * giving it back an unlink.
 */
export class WriteTurns {
  private owner: OwnerFile | null = null;
  private broken = false;
  /** Turns this process holds: a write nested in another, or a concurrent call, goes ahead at once. */
  private holding = 0;

  constructor(private readonly dir: string) {}

  /**
   * Waits for the turn `name` (bounded). Returns how to give it back, and whether another
   * process held it meanwhile (the caller is contended).
   */
  async take(name: string): Promise<Turn> {
    const me = this.holding ? null : this.ownerFile();
    if (!me) return { give: () => {}, waited: false };
    const path = `${this.dir}/${name}.turn`;
    const until = Date.now() + MAX_WAIT_MS;
    for (let n = 0; ; n++) {
      try {
        linkSync(me.path, path);
        this.holding++;
        let given = false;
        const give = () => {
          if (given) return;
          given = true;
          this.holding--;
          // Only our own: had it been broken and taken by another, that one keeps it.
          unlinkIfSame(path, me.ino);
        };
        return { give, waited: n > 0 };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") return { give: () => {}, waited: n > 0 };
      }
      // Whether the holder is still there is asked now and then, not on every wake (it reads /proc).
      if (n % 16 === 0) {
        const owner = readOwner(path);
        if (owner && holderGone(owner)) {
          breakTurn(path, owner.pid);
          continue;
        }
      }
      if (Date.now() >= until) return { give: () => {}, waited: true };
      // Woken when the folder changes (the holder gives the turn back), not by polling: eight
      // waiters polling every few milliseconds cost more CPU than the writes they wait for.
      await this.changeOrTimeout(n < 2 ? 2 : POLL_MS);
    }
  }

  /** Removes this process's owner file (its turns are given back by then). */
  close(): void {
    if (this.owner) rmQuiet(this.owner.path);
    this.owner = null;
    this.watcher?.close();
    this.watcher = null;
    for (const w of this.waiting.splice(0)) w();
  }

  private watcher: FSWatcher | null = null;
  private watchBroken = false;
  private readonly waiting: (() => void)[] = [];

  /** Resolves at the next change in the folder, or after `ms` (a missed event costs one poll). */
  private changeOrTimeout(ms: number): Promise<void> {
    if (!this.watcher && !this.watchBroken) {
      try {
        this.watcher = watch(this.dir, { persistent: false }, (_event, name) => {
          // A turn taken (its file made) frees nothing: only a turn given back, or anything else
          // (an owner file come or gone), is worth waking the waiters for. Among eight racers each
          // turn woke seven processes twice, each to fail at a link. Nobody waiting: nothing to ask
          // (the watch stays open between waits, and every racer's every turn is an event here).
          if (!this.waiting.length) return;
          if (typeof name === "string" && name.endsWith(".turn") && existsSync(`${this.dir}/${name}`)) return;
          for (const w of this.waiting.splice(0)) w();
        });
        this.watcher.on("error", () => {
          this.watchBroken = true;
          this.watcher?.close();
          this.watcher = null;
        });
      } catch {
        this.watchBroken = true;
      }
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.watcher ? ms : Math.min(ms, 1 + Math.random() * 2));
      const waiting = this.waiting;
      function done() {
        clearTimeout(timer);
        const i = waiting.indexOf(done);
        if (i >= 0) waiting.splice(i, 1);
        resolve();
      }
      waiting.push(done);
    });
  }

  /**
   * This process's owner file, made on first use; null when the folder cannot be written. Other
   * locks of this process may be links to it too (owned-lock.ts: the capacity turn).
   */
  ownerFile(): OwnerFile | null {
    if (this.owner || this.broken) return this.owner;
    try {
      // A folder of our own, not one a link names, before anything in it is swept or made.
      ownFolder(this.dir);
      sweep(this.dir);
      const path = `${this.dir}/${process.pid}-${uniqueSuffix()}.owner`;
      createExclusive(path, JSON.stringify(selfOwner()));
      this.owner = { path, ino: lstatSync(path).ino };
    } catch {
      this.broken = true;
    }
    return this.owner;
  }
}

/** Owner files and turns left by processes that are gone. */
function sweep(dir: string): void {
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".owner") && !name.endsWith(".turn")) continue;
    const owner = readOwner(`${dir}/${name}`);
    if (!owner || !holderGone(owner)) continue;
    if (name.endsWith(".turn")) breakTurn(`${dir}/${name}`, owner.pid);
    else rmQuiet(`${dir}/${name}`);
  }
}

/** Removes a dead holder's turn, putting back one another process took meanwhile. */
function breakTurn(path: string, pid: number): void {
  const aside = `${path}.broken-${uniqueSuffix()}`;
  try {
    renameSync(path, aside);
  } catch {
    return; // someone else broke it first
  }
  if (readOwner(aside)?.pid !== pid) {
    try {
      linkSync(aside, path);
    } catch {
      /* a newer turn is in place */
    }
  }
  rmQuiet(aside);
}

function rmQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* gone */
  }
}
