import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { childProcess } from "./builtins.ts";
import { closeSync, existsSync, openSync, readFileSync, readSync } from "node:fs";
import { inflateSync } from "node:zlib";
import { inflateStored } from "./small-object-codec.ts";
import { LocalPacks } from "./pack-files.ts";
import { looseObjectPath } from "./loose-object.ts";
import { envFor, placeOf, setAlive } from "./run.ts";

export type ObjectType = "commit" | "tree" | "blob" | "tag";

export interface GitObject {
  type: ObjectType;
  data: Buffer;
}

/**
 * Reads objects: loose ones straight from disk (a file read and an inflate, no process), packed
 * ones from the repository's own packs where their .idx and entries are as pack-files.ts reads
 * them, anything else (alternates, other layouts) through one long-lived `git cat-file --batch`
 * started on first need. Returns null for an object that does not exist.
 */
export class ObjectReader {
  private batch: CatFileBatch | null = null;
  /** Objects this process wrote lately (object-writer.ts), read from memory. */
  recent: ((oid: string) => GitObject | undefined) | null = null;

  /**
   * `commonDir`: the git dir whose loose objects are read; `cwd`: where cat-file runs (in a
   * separate store it also reaches the repository's objects, through alternates).
   */
  constructor(
    private readonly commonDir: string,
    private readonly cwd: string,
  ) {}

  /** The repository's own packs (pack-files.ts), searched before a cat-file is started. */
  private packs: LocalPacks | null = null;

  async read(oid: string): Promise<GitObject | null> {
    return this.recent?.(oid) ?? readLoose(this.commonDir, oid) ?? this.fromPacks(oid) ?? this.readBatch(oid);
  }

  /** The object from this repository's own files (loose or packed), never asking a git process; undefined otherwise. */
  readHere(oid: string): GitObject | undefined {
    return this.recent?.(oid) ?? readLoose(this.commonDir, oid) ?? this.fromPacks(oid);
  }

  /** The object from the repository's own packs (opened on first need), or undefined. */
  private fromPacks(oid: string): GitObject | undefined {
    return (this.packs ??= new LocalPacks(`${this.commonDir}/objects`)).read(oid);
  }

  private readBatch(oid: string): Promise<GitObject | null> {
    this.batch ??= new CatFileBatch(this.cwd);
    return this.batch.read(oid) as Promise<GitObject | null>; // a --batch child answers whole objects
  }

  /**
   * An object's type and size without reading it whole: what came from another clone is measured
   * against its bounds before it is read (a 300 MB task.json took 650 MB of memory to refuse).
   */
  async info(oid: string): Promise<ObjectInfo | null> {
    const recent = this.recent?.(oid);
    if (recent) return { type: recent.type, size: recent.data.length };
    const loose = looseInfo(this.commonDir, oid);
    if (loose !== undefined) return loose;
    // A packed object within pack-files.ts's bound (1 MB) is read whole: its pack keeps it, so the
    // read that follows the measure costs nothing more. A first sync of 1,000 tasks asked a
    // `--batch-check` child for each fetched object in turn, a round trip each: most of its time.
    const packed = this.fromPacks(oid);
    if (packed) return { type: packed.type, size: packed.data.length };
    this.check ??= new CatFileBatch(this.cwd, true);
    return this.check.read(oid) as Promise<ObjectInfo | null>; // a --batch-check child answers type and size
  }

  private check: CatFileBatch | null = null;

  close(): void {
    this.packs?.close();
    this.packs = null;
    this.batch?.close();
    this.batch = null;
    this.check?.close();
    this.check = null;
  }
}

export interface ObjectInfo {
  type: ObjectType;
  size: number;
}

/** A loose object's header, from its first bytes (undefined: not loose here; null: damaged). */
function looseInfo(commonDir: string, oid: string): ObjectInfo | null | undefined {
  const path = looseObjectPath(commonDir, oid);
  if (!existsSync(path)) return undefined; // as readLoose: no error thrown for each packed object
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    const head = Buffer.alloc(256);
    const n = readSync(fd, head, 0, head.length, 0);
    // A partial stream: what inflates of the first bytes holds the header ("blob 123\0").
    const out = inflateSync(head.subarray(0, n), { finishFlush: Z_SYNC_FLUSH });
    const nul = out.indexOf(0);
    if (nul < 0) return null;
    const [type, size] = out.subarray(0, nul).toString("latin1").split(" ");
    return OBJECT_TYPES.has(type!) && /^\d+$/.test(size ?? "") ? { type: type as ObjectType, size: Number(size) } : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

const OBJECT_TYPES = new Set(["commit", "tree", "blob", "tag"]);
/** zlib.h's Z_SYNC_FLUSH (the build lends node:zlib's functions lazily, not its constants). */
const Z_SYNC_FLUSH = 2;

function readLoose(commonDir: string, oid: string): GitObject | null {
  const path = looseObjectPath(commonDir, oid);
  // Looked for first: a read of a missing file throws, and the error costs ~14 us here against
  // ~3 for the look (a clone's records are packed: a first listing of 1,000 tried 3,000 paths).
  if (!existsSync(path)) return null;
  let raw: Buffer;
  try {
    raw = readFileSync(path);
  } catch {
    return null;
  }
  // Objects this tool wrote small are stored blocks (small-object-codec.ts): no node:zlib for them.
  let buf: Buffer;
  try {
    buf = inflateStored(raw) ?? inflateSync(raw);
  } catch {
    return null; // not a zlib stream (damaged on disk): git decides, and says what it found, as below
  }
  const nul = buf.indexOf(0);
  const [type, size] = buf.subarray(0, nul).toString("latin1").split(" ");
  const data = buf.subarray(nul + 1);
  if (Number(size) !== data.length) return null; // damaged: let git decide
  return { type: type as ObjectType, data };
}

interface Pending {
  oid: string;
  /** An object (`--batch`) or its type and size (`--batch-check`). */
  resolve: (o: GitObject | ObjectInfo | null) => void;
  reject: (e: Error) => void;
}

/** A `git cat-file --batch` child answering requests in order; ~0.1 ms per read once started. */
class CatFileBatch {
  private child: ChildProcessWithoutNullStreams;
  private queue: Pending[] = [];
  private buf: Buffer = Buffer.alloc(0);
  /** Bytes `buf` must hold before the object at its head is whole (0: not waiting); chunks held meanwhile. */
  private waitFor = 0;
  private parts: Buffer[] = [];
  private partsLength = 0;
  private failed: Error | null = null;

  /** `checkOnly`: `--batch-check`, answering type and size only. */
  constructor(
    cwd: string,
    private readonly checkOnly = false,
  ) {
    this.child = childProcess().spawn("git", ["cat-file", checkOnly ? "--batch-check" : "--batch"], {
      cwd: placeOf(cwd),
      stdio: ["pipe", "pipe", "pipe"],
      env: envFor({ cwd }),
    });
    this.child.stdout.on("data", (b: Buffer) => {
      if (this.waitFor) {
        // A large object arrives in many chunks: joined once it is all here, not chunk by chunk
        // (each join copies everything before it: a 100 MB blob would copy gigabytes).
        this.parts.push(b);
        this.partsLength += b.length;
        if (this.buf.length + this.partsLength < this.waitFor) return;
        this.buf = Buffer.concat([this.buf, ...this.parts]);
        this.parts = [];
        this.partsLength = 0;
        this.waitFor = 0;
      } else this.buf = this.buf.length ? Buffer.concat([this.buf, b]) : b;
      this.drain();
    });
    const die = (e: Error) => {
      this.failed = e;
      for (const p of this.queue.splice(0)) p.reject(e);
    };
    this.child.on("error", die);
    this.child.on("close", () => die(new Error("git cat-file --batch exited")));
    this.child.stdin.on("error", () => {});
    this.child.stderr.resume();
    setAlive(this.child, false);
  }

  read(oid: string): Promise<GitObject | ObjectInfo | null> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      this.queue.push({ oid, resolve, reject });
      setAlive(this.child, true);
      this.child.stdin.write(oid + "\n");
    });
  }

  private drain(): void {
    while (this.queue.length) {
      const nl = this.buf.indexOf(10);
      if (nl < 0) return;
      const header = this.buf.subarray(0, nl).toString("latin1");
      const parts = header.split(" ");
      if (parts[1] === "missing" || parts[1] === "ambiguous") {
        this.buf = this.buf.subarray(nl + 1);
        this.queue.shift()!.resolve(null);
        if (!this.queue.length) setAlive(this.child, false);
        continue;
      }
      const size = Number(parts[2]);
      if (this.checkOnly) {
        this.buf = this.buf.subarray(nl + 1);
        this.queue.shift()!.resolve({ type: parts[1] as ObjectType, size });
        continue;
      }
      if (this.buf.length < nl + 1 + size + 1) {
        this.waitFor = nl + 1 + size + 1;
        return;
      }
      const data = Buffer.from(this.buf.subarray(nl + 1, nl + 1 + size));
      this.buf = this.buf.subarray(nl + 1 + size + 1);
      this.queue.shift()!.resolve({ type: parts[1] as ObjectType, data });
    }
    if (!this.queue.length) setAlive(this.child, false);
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
  }
}
