// Turns at a hot ref for the long-running processes of one machine. Racing writers of one ref
// (every claim of a task with a scope moves refs/handoff/leases) mostly lose to each other: each
// reads the tip, decides, writes objects, and all but one find the tip moved and start over. A
// turn makes them queue instead, so each write succeeds at its first attempt. It is only a
// courtesy: the compare-and-swap still decides, a writer that waits past a bound goes ahead
// without its turn, and a turn whose holder is gone is broken at once (owned-lock.ts).
//
// A writer that finds the turn taken queues (a hard link of its owner file, named by when it
// queued), and the holder hands the turn to the longest waiting one by renaming that link onto the
// turn: the waiter is woken through a watch of its own owner file, which the rename reaches and no
// other process's watch does. Waking every waiter at each turn given back (a watch of the folder)
// cost seven processes a wake, a failed link and a new timer per grant among eight racers.
import { uniqueSuffix } from "./unique-name.ts";
import { existsSync, linkSync, lstatSync, readdirSync, renameSync, unlinkSync, watch, type FSWatcher, type WatchListener } from "node:fs";
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
    /** Our place in the queue, once queued. */
    let place: string | null = null;
    for (let n = 0; ; n++) {
      // Handed over: the holder renamed our place onto the turn (or, for another caller of this
      // process, left the turn ours).
      if (place && sameInode(path, me.ino)) {
        unlinkIfSame(place, me.ino);
        // A concurrent call of this process got it first: this one goes ahead, as a nested write does.
        return this.holding ? { give: () => {}, waited: true } : this.held(name, path, me, true);
      }
      try {
        linkSync(me.path, path);
        if (place) unlinkIfSame(place, me.ino);
        return this.held(name, path, me, n > 0);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") return this.leave(place, name, path, me, n > 0);
      }
      // Whether the holder is still there is asked now and then, not on every wake (it reads /proc).
      if (n % 16 === 0) {
        const owner = readOwner(path);
        if (owner && holderGone(owner)) {
          breakTurn(path, owner.pid);
          continue;
        }
      }
      if (Date.now() >= until) return this.leave(place, name, path, me, true);
      place ??= this.queue(name, me);
      // Woken by the hand-over, not by polling: eight waiters polling every few milliseconds cost
      // more CPU than the writes they wait for. The poll is for a holder that gives the turn back
      // without handing it over (an older build, one that crashed).
      await this.changeOrTimeout(place ? QUEUED_POLL_MS : n < 2 ? 2 : POLL_MS, !place);
    }
  }

  /** The turn, held: given back to the longest waiting writer, or freed when none waits. */
  private held(name: string, path: string, me: OwnerFile, waited: boolean): Turn {
    this.holding++;
    let given = false;
    const give = () => {
      if (given) return;
      given = true;
      this.holding--;
      this.handOver(name, path, me);
    };
    return { give, waited };
  }

  /**
   * Leaves the queue without the turn (the bound passed, or the folder failed us). A holder that
   * handed the turn over just before finds our place gone: then the turn is ours after all.
   */
  private leave(place: string | null, name: string, path: string, me: OwnerFile, waited: boolean): Turn {
    if (place) {
      try {
        unlinkSync(place);
      } catch {
        if (sameInode(path, me.ino) && !this.holding) return this.held(name, path, me, true);
      }
    }
    return { give: () => {}, waited };
  }

  /** Queues for `name`: a link of the owner file named by when (null: the folder refused it). */
  private queue(name: string, me: OwnerFile): string | null {
    const place = `${this.dir}/${name}${QUEUED}${Date.now().toString(36).padStart(9, "0")}-${process.pid}-${uniqueSuffix()}`;
    try {
      linkSync(me.path, place);
      return place;
    } catch {
      return null;
    }
  }

  /**
   * Gives the turn to the writer queued longest: its place renamed onto the turn (one step, so
   * no writer that has not queued takes it between). A waiter of this process keeps it as it is.
   * None queued: the turn is freed.
   */
  private handOver(name: string, path: string, me: OwnerFile): void {
    // Only our own: had it been broken and taken by another, that one keeps it.
    if (!sameInode(path, me.ino)) return;
    let queued: string[] = [];
    try {
      const prefix = `${name}${QUEUED}`;
      queued = readdirSync(this.dir).filter((n) => n.startsWith(prefix)).sort();
    } catch {
      /* gone: freed below */
    }
    for (const n of queued) {
      const place = `${this.dir}/${n}`;
      try {
        // A rename onto another name of the same inode does nothing: a waiter of this owner (a
        // concurrent call of this process) is told in process, and its place removed.
        if (sameInode(place, me.ino)) {
          unlinkSync(place);
          for (const w of this.waiting.splice(0)) w();
        } else if (processGone(n)) {
          // Killed while it waited: a turn handed to it would be held by nobody until broken.
          rmQuiet(place);
          continue;
        } else renameSync(place, path);
        return;
      } catch {
        /* that waiter left meanwhile: the next one */
      }
    }
    unlinkIfSame(path, me.ino);
  }

  /** Removes this process's owner file (its turns are given back by then). */
  close(): void {
    if (this.owner) rmQuiet(this.owner.path);
    this.owner = null;
    this.watcher?.close();
    this.watcher = null;
    this.bell?.close();
    this.bell = null;
    for (const w of this.waiting.splice(0)) w();
  }

  private watcher: FSWatcher | null = null;
  private watchBroken = false;
  /** A watch of this process's owner file: a hand-over renames one of its names. */
  private bell: FSWatcher | null = null;
  private bellBroken = false;
  private readonly waiting: (() => void)[] = [];

  /**
   * Resolves when woken, or after `ms` (a missed event costs one poll): queued, by a hand-over
   * (a watch of the owner file); not queued (`folder`), by a change in the folder.
   */
  private changeOrTimeout(ms: number, folder: boolean): Promise<void> {
    const watching = folder ? this.watchFolder() : this.ringable();
    return new Promise((resolve) => {
      const timer = setTimeout(done, watching ? ms : Math.min(ms, 1 + Math.random() * 2));
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

  private ringable(): boolean {
    if (!this.bell && !this.bellBroken && this.owner) {
      // Links made or removed change the owner file's link count ("change"); only a rename of
      // one of its names ("rename") can be a hand-over.
      this.bell = watchOrNone(
        this.owner.path,
        (event) => {
          if (event === "rename") for (const w of this.waiting.splice(0)) w();
        },
        () => {
          this.bellBroken = true;
          this.bell = null;
        },
      );
    }
    return this.bell !== null;
  }

  private watchFolder(): boolean {
    if (!this.watcher && !this.watchBroken) {
      this.watcher = watchOrNone(
        this.dir,
        (_event, name) => {
          // A turn taken (its file made) frees nothing: only a turn given back, or anything else
          // (an owner file come or gone), is worth waking the waiters for. Nobody waiting: nothing
          // to ask (the watch stays open between waits).
          if (!this.waiting.length) return;
          if (typeof name === "string" && name.endsWith(".turn") && existsSync(`${this.dir}/${name}`)) return;
          for (const w of this.waiting.splice(0)) w();
        },
        () => {
          this.watchBroken = true;
          this.watcher = null;
        },
      );
    }
    return this.watcher !== null;
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

/**
 * A watch of `path` that is told of its own failure: `broken` is called when it cannot be made, or
 * once it fails (it is closed then), and the caller polls instead. Null when it cannot be made.
 */
function watchOrNone(path: string, listener: WatchListener<string>, broken: () => void): FSWatcher | null {
  try {
    const w = watch(path, { persistent: false }, listener);
    w.on("error", () => {
      broken();
      w.close();
    });
    return w;
  } catch {
    broken();
    return null;
  }
}

/** A queued writer's place: `<turn>.queued-<when>-<pid>-<suffix>` (never ending in .turn or .owner). */
const QUEUED = ".queued-";
/** Queued, a waiter looks this often anyway (a holder that gave the turn back without handing it over). */
const QUEUED_POLL_MS = 50;

/** Whether the process a place names is gone (kill -0: one system call, not its owner record). */
function processGone(place: string): boolean {
  const pid = Number(place.slice(place.indexOf(QUEUED) + QUEUED.length).split("-")[1]);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
}

function sameInode(path: string, ino: number): boolean {
  return lstatSync(path, { throwIfNoEntry: false })?.ino === ino;
}

/** Owner files, turns and places in a queue left by processes that are gone. */
function sweep(dir: string): void {
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".owner") && !name.endsWith(".turn") && !name.includes(QUEUED)) continue;
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
