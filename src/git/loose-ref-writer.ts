// Compare-and-swap ref transactions written in-process through git's own lock protocol for the
// files backend. For long-running processes: a long-lived `git update-ref --stdin` costs a pipe
// round trip to another process on every write (on a loaded 2-core machine, two context switches
// and a wait for the other process to be scheduled) and, for every ref, a new inode for its lock
// file (1-3 ms on a busy disk). Here each ref is locked by hard-linking a temp file made ahead of
// need to `<ref>.lock` (as exclusive as git's O_CREAT|O_EXCL: it fails if the lock exists), its
// value is checked under the lock, and the lock is renamed over the ref: the very files git
// writes, in git's order, so git processes racing on the same refs stay safe. For one-shot
// processes (a cold `claim`): `git update-ref` would be the only process they start, and starting
// it (with node:child_process) costs a tenth of the command; they read git's configuration from its
// files (config-scan.ts) and write each lock file directly.
//
// Only the plain case is taken here: updates of loose or packed refs, and creations of refs that
// clash with nothing (no file where a folder must be, no packed ref in the way), under
// refs/handoff/ and refs/handoff-remotes/, in a repository without reflogs for them, without a
// reference-transaction hook, without core.sharedRepository and without core.fsync; never
// deletions. Anything else returns null and goes to git.
import { closeSync, existsSync, fdatasync, linkSync, mkdirSync, open, openSync, renameSync, unlink, unlinkSync, write, writeSync } from "node:fs";
import { ownFolder } from "./safe-file.ts";
import { isAbsolute, join } from "node:path";
import { looseObjectPath } from "./loose-object.ts";
import { namesOfDeadProcesses } from "./process-alive.ts";
import { pipeline } from "./fill-pipeline.ts";
import { QuietTrigger } from "./quiet-trigger.ts";
import { readRefText } from "./ref-text.ts";
import { uniqueSuffix } from "./unique-name.ts";
import { git } from "./run.ts";
import { sharedPerm } from "./shared-perm.ts";
import type { RefUpdate, TransactionResult } from "./refs.ts";

/** What the repository's git configuration (all scopes) says about ref writes. */
export interface RefWritePolicy {
  /** core.logAllRefUpdates=always: every ref update gets a reflog entry. */
  logAll: boolean;
  /** core.sharedRepository: git adjusts the lock file's permissions. */
  shared: boolean;
  /** core.sharedRepository as git reads it (shared-perm.ts sharedPerm): 0 when unset or `umask`. */
  sharedPerm: number;
  /** Where git looks for the reference-transaction hook. */
  hooksDir: string;
  /** core.fsync is set: it may name references, which git then flushes before each rename. */
  fsync: boolean;
  /** core.filesRefLockTimeout: how long a one-shot writer waits for a ref another process has locked. */
  lockTimeoutMs: number;
}

/** What the writer asks of packed-refs (ref-files.ts RefFiles). */
export interface PackedRefs {
  /** The ref's value in packed-refs, or null. */
  readPacked(ref: string): string | null;
  /** Whether a new ref of this name would clash with packed ones. */
  packedClash(ref: string): boolean;
}

/** The policy from `git config --null --list` output (keys lower-cased by git). */
export function refWritePolicy(configList: string, commonDir: string, workTree: string | null): RefWritePolicy {
  const values = new Map<string, string>();
  for (const entry of configList.split("\0")) {
    if (!entry) continue;
    const nl = entry.indexOf("\n");
    values.set((nl < 0 ? entry : entry.slice(0, nl)).toLowerCase(), nl < 0 ? "true" : entry.slice(nl + 1));
  }
  const shared = sharedPerm(values.get("core.sharedrepository"));
  const hooksPath = values.get("core.hookspath");
  const base = workTree ?? commonDir;
  return {
    logAll: (values.get("core.logallrefupdates") ?? "").toLowerCase() === "always",
    shared: shared !== 0,
    sharedPerm: shared,
    hooksDir: hooksPath ? (isAbsolute(hooksPath) ? hooksPath : join(base, hooksPath)) : `${commonDir}/hooks`,
    fsync: values.has("core.fsync"),
    lockTimeoutMs: lockTimeout(values.get("core.filesreflocktimeout")),
  };
}

/** git's reading of core.filesRefLockTimeout: milliseconds, 100 by default, negative for ever (here: a minute). */
function lockTimeout(value: string | undefined): number {
  if (value === undefined || !/^-?\d+$/.test(value.trim())) return 100;
  const ms = Number(value.trim());
  return ms < 0 ? 60_000 : ms;
}

/** Whether writes under this policy can be made here: nothing git alone does (reflogs, shared permissions, fsync). */
export function takesPolicy(policy: RefWritePolicy): boolean {
  return !policy.logAll && !policy.shared && !policy.fsync;
}

/**
 * A ref name this writer takes: under refs/handoff/ or its tracking refs refs/handoff-remotes/
 * (a remote claim settles both in one transaction), every component a plain, valid name.
 */
const PLAIN_REF = /^refs\/handoff(-remotes)?\/[A-Za-z0-9_@+=-][A-Za-z0-9._@+=-]*(\/[A-Za-z0-9_@+=-][A-Za-z0-9._@+=-]*)*$/;
const HEX = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** `HANDOFF_REF_WRITER=git`: every ref write goes to git (benchmarks compare both). */
const sendAllToGit = () => process.env.HANDOFF_REF_WRITER === "git";

export class LooseRefWriter {
  /**
   * The writer for a repository on the files backend, or null when its git configuration asks for
   * what only git does (then every write goes to git). `HANDOFF_REF_WRITER=git` sends them all to
   * git (benchmarks compare both).
   */
  static async open(cwd: string, commonDir: string, workTree: string | null, refs: PackedRefs): Promise<LooseRefWriter | null> {
    if (sendAllToGit()) return null;
    const r = await git(["config", "--null", "--list"], { cwd });
    if (r.code !== 0 && r.stdout === "") return null;
    const policy = refWritePolicy(r.stdout, commonDir, workTree);
    return takesPolicy(policy) ? new LooseRefWriter(commonDir, policy, refs) : null;
  }

  /**
   * The writer of a one-shot process, from the policy `scan` reads out of git's files (null when
   * they are beyond the reader: then every write goes to git, as with `HANDOFF_REF_WRITER=git`).
   */
  static oneShot(commonDir: string, scan: () => RefWritePolicy | null, refs: PackedRefs): LooseRefWriter | null {
    if (sendAllToGit()) return null;
    const policy = scan();
    return policy && takesPolicy(policy) ? new LooseRefWriter(commonDir, policy, refs, true) : null;
  }

  /**
   * Temp files made ahead, open for writing, each holding `tempLength` placeholder bytes already
   * on disk (see makeOne).
   */
  private readonly temps: { path: string; fd: number }[] = [];
  /** The length of a ref file's content here: an object id in hex and a newline (41 for SHA-1, 65 for SHA-256). */
  private tempLength = 41;
  private filling = false;
  private closed = false;
  private readonly tempDir: string;
  private swept = false;
  /** Second names of replaced ref files, still to be removed (removeLater). */
  private readonly toRemove = new Set<string>();

  constructor(
    private readonly commonDir: string,
    private readonly policy: RefWritePolicy,
    /** packed-refs, as git reads it (ref-files.ts). */
    private readonly packed: PackedRefs,
    /**
     * A one-shot process writes each lock file itself, as git does (one new inode, no temp made
     * ahead), and renames it straight over the ref: its one write is not worth a pool of temps.
     */
    private readonly oneShot = false,
  ) {
    this.tempDir = `${commonDir}/handoff/ref-temps`;
  }

  /**
   * Applies all updates or none, each only if its ref has the expected old value, or returns
   * null when this transaction is one for git.
   */
  update(updates: RefUpdate[], written?: (oid: string) => boolean): TransactionResult | null {
    if (!this.takes(updates, written)) return null;
    const held: { ref: string; temp: string | null }[] = [];
    const unlock = () => {
      for (const h of held) {
        unlinkQuiet(`${this.commonDir}/${h.ref}.lock`);
        if (h.temp) unlinkQuiet(h.temp);
      }
    };
    try {
      // Lock every ref first, in name order (two writers here of the same refs never each hold
      // one the other waits for), then check each under its lock.
      for (const u of [...updates].sort((a, b) => (a.ref < b.ref ? -1 : 1))) {
        const temp = this.oneShot ? null : this.tempWith(`${u.new}\n`);
        try {
          if (temp) linkSync(temp, `${this.commonDir}/${u.ref}.lock`);
          else writeLockWaiting(`${this.commonDir}/${u.ref}.lock`, `${u.new}\n`, this.policy.lockTimeoutMs);
        } catch (e) {
          if (temp) unlinkQuiet(temp);
          const code = (e as NodeJS.ErrnoException).code;
          if (code === "EEXIST") {
            unlock();
            return { ok: false, reason: "locked", message: `Unable to create '${this.commonDir}/${u.ref}.lock': File exists.` };
          }
          // No folder for the ref (it is packed, or absent): git makes folders and reports absence.
          if (code === "ENOENT" || code === "ENOTDIR") {
            unlock();
            return null;
          }
          throw e;
        }
        held.push({ ref: u.ref, temp });
      }
      // Anything unexpected before a ref is set (a folder where a ref file should be, a folder
      // that cannot be written) is git's to handle and to say, as it would have been.
      for (const u of updates) {
        const now = this.current(u.ref);
        if (now !== u.old) {
          unlock();
          return {
            ok: false,
            reason: "stale",
            message:
              now === null
                ? `cannot lock ref '${u.ref}': unable to resolve reference '${u.ref}'`
                : u.old === null
                  ? `cannot lock ref '${u.ref}': reference already exists`
                  : `cannot lock ref '${u.ref}': is at ${now} but expected ${u.old}`,
          };
        }
      }
    } catch {
      unlock();
      return null;
    }
    // The replaced ref files get a second name first, removed later off the write's path: a
    // rename over a file whose inode then goes away frees its data block there and then (0.4-1.3
    // ms here on ext4), a rename over one that keeps a name costs what a rename into a new name does.
    const kept: string[] = [];
    for (const h of this.oneShot ? [] : held) {
      const name = `${this.tempName()}.old`;
      try {
        linkSync(`${this.commonDir}/${h.ref}`, name);
        kept.push(name);
      } catch {
        // No loose file (the ref is packed), or the folder cannot be written: nothing to keep.
      }
    }
    this.removeLater(kept);
    // Commit: each lock becomes its ref, one by one as git does, in the caller's order (not the
    // locks' name order): a crash between two renames leaves the first set and the rest not, so
    // the caller puts first the ref that may stand alone (a claim's task before the lease it
    // implies, a finished task's lease end before the task: task-lease-store.ts refOrder). git's
    // `update-ref --stdin`, which the same writes go to otherwise, renames in that order too.
    const commitOrder = updates.map((u) => held.find((h) => h.ref === u.ref)!);
    for (let i = 0; i < commitOrder.length; i++) {
      const h = commitOrder[i]!;
      try {
        renameSync(`${this.commonDir}/${h.ref}.lock`, `${this.commonDir}/${h.ref}`);
      } catch (e) {
        // As with git, the refs renamed so far stay set; the rest are unlocked.
        for (const rest of commitOrder.slice(i)) unlinkQuiet(`${this.commonDir}/${rest.ref}.lock`);
        for (const t of held) if (t.temp) unlinkQuiet(t.temp);
        throw new Error(`could not set ${h.ref}: ${(e as Error).message}`);
      }
    }
    // The temps' own names (each file is a ref now) go once the process is quiet.
    this.removeLater(held.flatMap((h) => (h.temp ? [h.temp] : [])));
    return { ok: true };
  }

  /** Unlinks `paths` on libuv's thread pool once the process is quiet (the caller's answer sent). */
  private removeLater(paths: string[]): void {
    if (paths.length === 0) return;
    for (const p of paths) this.toRemove.add(p);
    // Writes with never a quiet spell between them must not pile up names: past a bound, now.
    if (this.toRemove.size - this.removing.size > REMOVE_BOUND) this.removeNow();
    else this.quiet.poke();
  }

  private removeNow(): void {
    for (const p of this.toRemove) if (!this.removing.has(p)) {
      this.removing.add(p);
      unlink(p, () => {
        this.removing.delete(p);
        this.toRemove.delete(p);
      });
    }
  }

  /** Background work between requests: removing replaced ref files, refilling the temp pool. */
  private readonly quiet = new QuietTrigger(() => {
    this.removeNow();
    this.fillNow();
  });
  /** Of `toRemove`, the names whose unlink is under way. */
  private readonly removing = new Set<string>();

  /** Creates temp files ahead of need, off the critical path. */
  prepareAhead(): void {
    this.fillNow();
  }

  close(): void {
    this.closed = true;
    this.quiet.cancel();
    for (const p of this.toRemove) unlinkQuiet(p);
    this.toRemove.clear();
    for (const t of this.temps.splice(0)) {
      closeQuiet(t.fd);
      unlinkQuiet(t.path);
    }
  }

  /** Whether this transaction is the plain kind written here (see the head of the file). */
  private takes(updates: RefUpdate[], written?: (oid: string) => boolean): boolean {
    if (updates.length === 0 || !takesPolicy(this.policy)) return false;
    if (existsSync(`${this.policy.hooksDir}/reference-transaction`)) return false;
    const seen = new Set<string>();
    for (const u of updates) {
      if (u.new === null || !HEX.test(u.new) || !PLAIN_REF.test(u.ref) || u.ref.endsWith(".lock")) return false;
      if (u.old === null ? !this.takesCreation(u.ref) : !HEX.test(u.old)) return false;
      if (seen.has(u.ref)) return false;
      seen.add(u.ref);
      // git writes a reflog entry where a log exists; and it checks that the new object exists,
      // which for an object not loose (packed) is git's to find. One the caller has just written
      // is not looked for: the caller checks its objects again once the refs are set (a prune
      // between its write and the update is put right then, ObjectWriter.settle).
      if (existsSync(`${this.commonDir}/logs/${u.ref}`)) return false;
      if (!written?.(u.new) && !existsSync(looseObjectPath(this.commonDir, u.new))) return false;
    }
    return true;
  }

  /**
   * A creation written here: nothing at the ref's path (a loose ref there is git's to report as
   * existing, a folder there is a clash), every folder on its way a folder or absent (a file is a
   * ref that clashes), and no packed ref it clashes with. The folders are made here (as git makes
   * them); a file where a folder must be, or anything else unexpected, goes to git.
   */
  private takesCreation(ref: string): boolean {
    if (existsSync(`${this.commonDir}/${ref}`) || this.packed.packedClash(ref)) return false;
    // Folder by folder below refs/, never refs/ itself: a git dir that is gone (a separate store
    // moved away, separate-store.ts) is not made again here; git reports it instead.
    const parts = ref.split("/").slice(1, -1);
    for (let i = 1; i <= parts.length; i++) {
      try {
        mkdirSync(`${this.commonDir}/refs/${parts.slice(0, i).join("/")}`);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") return false;
      }
    }
    return true;
  }

  /** The ref's value as git reads it under the lock: the loose file, else packed-refs. */
  private current(ref: string): string | null {
    let text: string | null = null;
    try {
      text = readRefText(`${this.commonDir}/${ref}`);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw e;
    }
    if (text !== null) {
      const value = text.trim();
      return HEX.test(value) ? value : "(not a plain ref)";
    }
    return this.packed.readPacked(ref);
  }

  /** A temp file holding `content`, made ahead when one is ready. */
  private tempWith(content: string): string {
    if (content.length !== this.tempLength) this.resize(content.length);
    const made = this.temps.pop();
    this.fillSoon();
    if (made) {
      try {
        // Over the placeholder, in place: the file keeps its length and its block on disk.
        writeSync(made.fd, content, 0);
        closeSync(made.fd);
        // Gone meanwhile (its folder removed by hand): the link fails and git takes the write.
        return made.path;
      } catch {
        closeQuiet(made.fd);
      }
      unlinkQuiet(made.path);
    }
    const path = this.tempName();
    ownFolder(this.tempDir);
    const fd = openSync(path, "wx", 0o666);
    try {
      writeSync(fd, content);
    } finally {
      closeSync(fd);
    }
    return path;
  }

  /** Ref files of another length than the temps made so far (a SHA-256 repository): those go. */
  private resize(length: number): void {
    this.tempLength = length;
    for (const t of this.temps.splice(0)) {
      closeQuiet(t.fd);
      unlinkQuiet(t.path);
    }
  }

  private tempName(): string {
    return `${this.tempDir}/${process.pid}-${uniqueSuffix()}`;
  }

  /** After a temp is taken: a refill once the process is quiet, or at once when few are left. */
  private fillSoon(): void {
    if (this.temps.length > POOL / 4) this.quiet.poke();
    else this.fillNow();
  }

  private fillNow(): void {
    if (this.filling || this.closed || this.temps.length >= POOL) return;
    this.filling = true;
    setImmediate(() => void this.fill().finally(() => (this.filling = false))).unref();
  }

  private async fill(): Promise<void> {
    try {
      // A folder of our own, not one a link names, before anything in it is swept or made.
      ownFolder(this.tempDir);
      if (!this.swept) {
        this.swept = true;
        sweepDead(this.tempDir);
      }
      // Several at once on libuv's thread pool, each finished one starting the next (fill-pipeline.ts).
      await pipeline(PARALLEL, (running) => !this.closed && this.temps.length + running < POOL, () => this.makeOne());
    } catch {
      // A full disk or a read-only folder: each write then makes its own temp file and says why.
    }
  }

  /**
   * One temp file for the pool, its placeholder content written and flushed. Renaming a lock over
   * an existing ref makes ext4 allocate the lock file's delayed blocks and start their writeback
   * there and then (its `auto_da_alloc` safeguard for files replaced by rename): 50-60 us of
   * every rename here, twice a claim. A file whose block is already on disk, written over in
   * place, has nothing delayed: the rename costs 3 us. The flush happens here, on libuv's thread
   * pool, long before the temp is used; where it fails (a file system without it) the temp is
   * used all the same.
   */
  private async makeOne(): Promise<void> {
    const path = this.tempName();
    const length = this.tempLength;
    // Mode 0666 less the umask: what git gives its lock files, hence the ref files.
    const fd = await new Promise<number>((resolve, reject) => open(path, "wx", 0o666, (e, fd) => (e ? reject(e) : resolve(fd))));
    const placed = await new Promise<boolean>((resolve) => write(fd, Buffer.alloc(length, 0x30), 0, length, 0, (e) => resolve(!e)));
    if (placed && !this.closed) await new Promise<void>((resolve) => fdatasync(fd, () => resolve()));
    if (this.closed || !placed || length !== this.tempLength) {
      closeQuiet(fd);
      unlinkQuiet(path);
    } else this.temps.push({ path, fd });
  }
}

/** Ref temps kept made ahead (two a claim; refilled once quiet, or at once below a quarter). */
export const REF_TEMP_POOL = 32;
const POOL = REF_TEMP_POOL;
/** Names waiting for a quiet spell beyond which they are removed at once. */
const REMOVE_BOUND = 256;
const PARALLEL = 8;

/** Temp files left by processes that are gone (a crash between a write and its cleanup). */
function sweepDead(dir: string): void {
  const pidOf = (name: string) => {
    const pid = Number(name.split("-")[0]);
    return Number.isInteger(pid) && pid > 0 && pid !== process.pid ? pid : null;
  };
  // Removing a name never touches a ref that shares its inode (a crash after the rename).
  for (const name of namesOfDeadProcesses(dir, pidOf)) unlinkQuiet(`${dir}/${name}`);
}

/**
 * A lock file made the way git makes one: created exclusively (mode 0666 less the umask), then
 * written. A lock another process holds is waited for as git waits (lockfile.c
 * lock_file_timeout: back off about 1, 4, 9, 16... ms, up to core.filesRefLockTimeout, 100 ms
 * by default), blocking: a one-shot command has nothing else to do meanwhile, as it would while
 * its `git update-ref` waited.
 */
function writeLockWaiting(path: string, content: string, timeoutMs: number): void {
  let waited = 0;
  for (let n = 1, multiplier = 1; ; ) {
    try {
      return writeLock(path, content);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST" || waited >= timeoutMs) throw e;
    }
    const ms = Math.max(1, Math.round(((750 + Math.random() * 500) * multiplier) / 1000));
    Atomics.wait(SLEEPER, 0, 0, ms);
    waited += ms;
    multiplier = Math.min(1000, multiplier + 2 * n + 1);
    n++;
  }
}

const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

function writeLock(path: string, content: string): void {
  const fd = openSync(path, "wx", 0o666);
  try {
    writeSync(fd, content);
  } catch (e) {
    closeQuiet(fd);
    unlinkQuiet(path);
    throw e;
  }
  closeSync(fd);
}

function closeQuiet(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    /* already closed */
  }
}

function unlinkQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}
