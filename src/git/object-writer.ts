import { createHash, hash } from "node:crypto";
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { looseObjectPath } from "./loose-object.ts";
import { environmentRefusal } from "../core/environment.ts";
import { HandoffError } from "../core/errors.ts";
import { deflateSync } from "node:zlib";
import type { ObjectType } from "./object-reader.ts";
import { TempFiles, type TempFile } from "./temp-files.ts";
import { SMALL_OBJECT_MAX, sha1Hex, storedDeflate } from "./small-object-codec.ts";
import { uniqueSuffix } from "./unique-name.ts";
import { adjustSharedDir, adjustSharedFd } from "./shared-perm.ts";
import { objectFsyncIn, type ConfigRead } from "./config-read.ts";
import { repoSharedPerm } from "./config-scan.ts";

/**
 * Writes loose objects in-process, the way git does: into a temp file in the object's fan-out
 * folder, then renamed into place. A crash leaves at worst a stray `tmp_obj_*` file (which
 * `git gc` removes), never a truncated object under a real name. isomorphic-git's writers are not
 * atomic, which is why this is ours.
 *
 * Durability follows the repository's own policy, like git: the temp file is flushed to disk
 * before it is linked only when `core.fsync` covers objects or `core.fsyncObjectFiles` is set
 * (git's default does neither; an fsync costs 0.3-3 ms here, more than the rest of a claim).
 */
export class ObjectWriter {
  /** Whether objects are flushed (wantsObjectFsync), read at the first object written to disk: a pre-edit hook's check writes none. */
  private fsyncValue: boolean | undefined;
  /** Temp files made ahead, in long-running processes (temp-files.ts). */
  private temps: TempFiles | null = null;
  /**
   * Objects written (or found) since the last `settle`, with their content: until a ref points at
   * them they are unreachable, and a concurrent `git gc --prune=now` may delete them.
   */
  private pending = new Map<string, { type: ObjectType; body: Buffer }>();
  /** Long-running writers hash with node:crypto (loaded once there). */
  private longRunning = false;
  /**
   * The last objects written, by id, and when each was last known to be on disk: a process
   * reading back what it just wrote reads no file.
   */
  private readonly recent = new Map<string, { type: ObjectType; body: Buffer; seen: number }>();
  /** core.sharedRepository (shared-perm.ts), read at the first object written to disk. */
  private sharedValue: number | undefined;

  constructor(
    private readonly commonDir: string,
    private readonly format: "sha1" | "sha256",
    /** A separate store's config includes this file, the repository's (separate-store.ts). */
    private readonly includes: string | null = null,
    /** git's config files as a one-shot store's opening read them (config-read.ts ConfigRead). */
    private readonly read: ConfigRead | null = null,
  ) {}

  private get fsync(): boolean {
    return (this.fsyncValue ??= wantsObjectFsync(this.commonDir, this.read));
  }

  /** For long-running processes: create temp files ahead of need, off the critical path. */
  prepareAhead(): void {
    // A shared repository's folders and files need git's modes: each write makes its own.
    if (this.shared) return;
    this.temps ??= new TempFiles(`${this.commonDir}/objects`);
    this.longRunning = true;
    this.temps.fill();
  }

  close(): void {
    this.temps?.close();
    this.temps = null;
  }

  write(type: ObjectType, data: Buffer | string): string {
    const body = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    const raw = Buffer.concat([Buffer.from(`${type} ${body.length}\0`, "latin1"), body]);
    const small = raw.length <= SMALL_OBJECT_MAX;
    // Long-running writers have node:crypto loaded once; its SHA-1 is 3-10x ours (small-object-codec.ts
    // spares one-shot commands the module's load, not the hashing).
    // Never the one object a process hashes (a record is a blob, a tree and a commit): the
    // WebAssembly hash pays from the first (small-object-codec.ts sha1Hex).
    const oid = small && this.format === "sha1" && !this.longRunning ? sha1Hex(raw, true) : hexDigest(this.format, raw);
    // An object this process has not written lately is nearly always new (a record holds the time
    // it was written): it is written without asking first whether it is there. One it wrote or
    // found within KNOWN_FRESH_MS (a claim's unchanged blobs and trees) is not looked for either:
    // it is pending like the others, so `settle` writes it again should a prune have removed it.
    const last = this.recent.get(oid);
    const now = Date.now();
    if (this.pending.size < PENDING_LIMIT) this.pending.set(oid, { type, body });
    if (!last || now - last.seen >= KNOWN_FRESH_MS) this.store(oid, raw, last !== undefined);
    if (body.length <= RECENT_MAX_BYTES) {
      this.recent.delete(oid);
      this.recent.set(oid, { type, body, seen: last && now - last.seen < KNOWN_FRESH_MS ? last.seen : now });
      if (this.recent.size > RECENT_LIMIT) this.recent.delete(this.recent.keys().next().value!);
    }
    return oid;
  }

  /** Whether `oid` was written (or found) since the last `settle`: on disk a moment ago, checked again by `settle`. */
  isPending(oid: string): boolean {
    return this.pending.has(oid);
  }

  /** An object this writer wrote lately (its content: callers must not change it), or undefined. */
  recentObject(oid: string): { type: ObjectType; data: Buffer } | undefined {
    const o = this.recent.get(oid);
    return o && { type: o.type, data: o.body };
  }

  /**
   * After a ref update: every object written since the last call must still be there. A prune
   * that ran between the write and the update removed it; its content is still here, so it is
   * written again (stat calls only, no git). Returns how many were restored.
   */
  settle(): number {
    const restored = this.restoreMissing();
    this.pending.clear();
    return restored;
  }

  /** Writes back pending objects that vanished, keeping them pending (the update is still to come). */
  restoreMissing(): number {
    let restored = 0;
    for (const [oid, { type, body }] of this.pending) {
      if (existsSync(this.pathOf(oid))) continue;
      this.store(oid, Buffer.concat([Buffer.from(`${type} ${body.length}\0`, "latin1"), body]));
      restored++;
    }
    return restored;
  }

  private get shared(): number {
    return (this.sharedValue ??= repoSharedPerm(this.commonDir, null, this.includes));
  }

  /** core.sharedRepository where the caller read it already (shared-perm.ts sharedPerm). */
  knowShared(perm: number): void {
    this.sharedValue = perm;
  }

  private pathOf(oid: string): string {
    return looseObjectPath(this.commonDir, oid);
  }

  /**
   * With a temp file made ahead, an object not `known` to this process goes straight into place:
   * if another process wrote it meanwhile, the rename replaces it with the same bytes (git's own
   * rename mode), and the `stat` saved is most of what a fresh object's check costs.
   */
  private store(oid: string, raw: Buffer, known = true): void {
    const dir = `${this.commonDir}/objects/${oid.slice(0, 2)}`;
    const path = `${dir}/${oid.slice(2)}`;
    const ahead = known ? null : this.temps?.take();
    if (!ahead && existsSync(path)) return;
    const packed = raw.length <= SMALL_OBJECT_MAX ? storedDeflate(raw) : deflateSync(raw, { level: isTree(raw) ? 0 : 1 });
    const made = ahead ?? this.temps?.take();
    if (made && this.storeInto(made, packed, dir, path)) return;
    // `git prune --expire=now` removes temp files and empty fan-out folders at any moment: a temp
    // file that vanished before its link is written again.
    for (let n = 0; ; n++) {
      // Looked for above unless a temp file made ahead was to take it; again after a retry.
      if ((n > 0 || ahead) && existsSync(path)) return;
      const tmp = `${dir}/tmp_obj_${uniqueSuffix()}`;
      let placed = false;
      try {
        const fd = openTemp(dir, tmp, this.shared);
        try {
          writeSync(fd, packed);
          if (this.fsync) fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
        // git's rename mode (core.createObject=rename): an object another process wrote meanwhile
        // has the same bytes, so replacing it is harmless; one call where link + unlink take two.
        renameSync(tmp, path);
        placed = true;
        return;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "EEXIST") return;
        if (code === "ENOENT" && n < 5) continue;
        // A full disk or a read-only folder is the machine's refusal, not a bug: say which.
        const refusal = environmentRefusal(e, (e as NodeJS.ErrnoException).path ?? dir);
        if (refusal) throw new HandoffError(refusal);
        throw e;
      } finally {
        if (!placed) removeQuiet(tmp); // never leave a temp object behind, whatever failed
      }
    }
  }

  /**
   * Writes into a temp file made ahead and renames it into place (git's rename mode: an object
   * written meanwhile by another process has the same content). False when it could not be used,
   * e.g. `git prune` removed it: the caller then writes the object the usual way.
   */
  private storeInto(t: TempFile, packed: Buffer, dir: string, path: string): boolean {
    try {
      try {
        writeSync(t.fd, packed);
        if (this.fsync) fsyncSync(t.fd);
      } finally {
        closeSync(t.fd);
      }
      try {
        renameSync(t.path, path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENOENT" || !existsSync(t.path)) throw e;
        makeFanOut(dir, 0); // temp files made ahead only where the repository is not shared
        renameSync(t.path, path);
      }
      return true;
    } catch {
      removeQuiet(t.path);
      return false;
    }
  }
}

/**
 * node:crypto's one-shot digest where this Node has it (20.12+; before, the stand-in of
 * scripts/build.mjs finds no such function and throws a TypeError once): a Hash object made,
 * fed and finished costs twice its time for a record-sized object, ~50 against ~25 us for a
 * claim's eight objects after a pause between requests.
 */
let oneShot = true;
function hexDigest(format: "sha1" | "sha256", raw: Buffer): string {
  if (oneShot) {
    try {
      return hash(format, raw, "hex");
    } catch (e) {
      if (!(e instanceof TypeError)) throw e;
      oneShot = false;
    }
  }
  return createHash(format).update(raw).digest("hex");
}

/** unlink, where gone already is fine (fs.rmSync loads and runs a whole rimraf for one file). */
function removeQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* gone already, or never made */
  }
}

/** How many recently written objects are kept, and up to what size (records are a few KB). */
const RECENT_LIMIT = 256;
const RECENT_MAX_BYTES = 64 * 1024;

/** More pending objects than one operation writes: a long-running process that never settles. */
const PENDING_LIMIT = 4096;

/**
 * How long an object this writer wrote, or found on disk, is taken to be there without a look.
 * Only `git gc --prune=now` removes a loose object that young (git's default expiry is two weeks)
 * and the object is pending all the same: `settle` restores it after the ref update.
 */
const KNOWN_FRESH_MS = 10_000;

/** The temp file, in a fan-out folder made if needed; `git prune` removes empty ones at any time. */
function openTemp(dir: string, tmp: string, shared: number): number {
  // A fan-out folder not seen yet is asked for first: in a young repository most of the 256 are
  // missing, and an open that throws ENOENT costs a cold process several times the stat.
  if (!fanOutSeen.has(dir)) {
    if (!statSync(dir, { throwIfNoEntry: false })) makeFanOut(dir, shared);
    if (fanOutSeen.size < 512) fanOutSeen.add(dir);
  }
  for (let n = 0; ; n++) {
    try {
      const fd = openSync(tmp, "wx", 0o444);
      if (shared) adjustSharedFd(fd, shared);
      return fd;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT" || n >= 5) throw e;
    }
    makeFanOut(dir, shared);
  }
}

/** Fan-out folders found or made by this process (a prune may remove one again: the open then retries). */
const fanOutSeen = new Set<string>();

/**
 * The fan-out folder, never its parents: `objects/` always exists in a repository, and where it
 * does not the repository was moved or removed under a running process, whose write must fail
 * (ENOENT) rather than make a ghost of it at the old path. (Not `recursive: true` either way:
 * Node reports a full disk there as ENOENT, which would hide the cause.)
 */
function makeFanOut(dir: string, shared: number): void {
  try {
    mkdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return;
    throw e;
  }
  // As git does after its mkdir: group (and others') access and setgid where the repository is shared.
  if (shared) adjustSharedDir(dir, shared);
}

/**
 * Whether the repository's config asks git to fsync loose objects. `read`: asked of its parse
 * there (config-read.ts objectFsyncIn), where the patterns below cost a cold claim a read and
 * three compiles.
 */
export function wantsObjectFsync(commonDir: string, read: ConfigRead | null = null): boolean {
  const parsed = read?.plain(`${commonDir}/config`);
  const asked = parsed ? objectFsyncIn(parsed) : undefined;
  if (asked !== undefined) return asked;
  let config: string;
  try {
    config = readFileSync(`${commonDir}/config`, "utf8");
  } catch {
    return false;
  }
  if (/^\s*fsyncobjectfiles\s*=\s*(true|yes|on|1)\s*$/im.test(config)) return true;
  const m = /^\s*fsync\s*=\s*(.+)$/im.exec(config);
  return !!m && /(^|,)\s*(loose-object|objects|committed|added|all)\s*(,|$)/i.test(m[1]!);
}

/**
 * A large tree (a lease set's folder of a thousand files: 40 KB, written at every claim) is mostly
 * 20-byte ids that do not compress: zlib at level 1 took 330 us to make it 37% smaller, stored
 * blocks take 50 us, and every reader inflates them four times as fast. `git gc` compresses it
 * when it packs, as it does the small objects stored so.
 */
function isTree(raw: Buffer): boolean {
  return raw.length > 5 && raw.toString("latin1", 0, 5) === "tree ";
}
