import { createHash, randomBytes } from "node:crypto";
import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { environmentRefusal } from "../core/environment.ts";
import { HandoffError } from "../core/errors.ts";
import { deflateSync } from "node:zlib";
import type { ObjectType } from "./object-reader.ts";

/**
 * Writes loose objects in-process, the way git does: into a temp file in the object's fan-out
 * folder, then linked into place. A crash leaves at worst a stray `tmp_obj_*` file (which
 * `git gc` removes), never a truncated object under a real name. isomorphic-git's writers are not
 * atomic, which is why this is ours.
 *
 * Durability follows the repository's own policy, like git: the temp file is flushed to disk
 * before it is linked only when `core.fsync` covers objects or `core.fsyncObjectFiles` is set
 * (git's default does neither; an fsync costs 0.3-3 ms here, more than the rest of a claim).
 */
export class ObjectWriter {
  private readonly fsync: boolean;

  constructor(
    private readonly commonDir: string,
    private readonly format: "sha1" | "sha256",
  ) {
    this.fsync = wantsObjectFsync(commonDir);
  }

  write(type: ObjectType, data: Buffer | string): string {
    const body = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    const raw = Buffer.concat([Buffer.from(`${type} ${body.length}\0`, "latin1"), body]);
    const oid = createHash(this.format).update(raw).digest("hex");
    const dir = `${this.commonDir}/objects/${oid.slice(0, 2)}`;
    const path = `${dir}/${oid.slice(2)}`;
    if (existsSync(path)) return oid;
    const tmp = `${dir}/tmp_obj_${randomBytes(6).toString("hex")}`;
    try {
      makeFanOut(dir);
      const fd = openSync(tmp, "wx", 0o444);
      try {
        writeSync(fd, deflateSync(raw, { level: 1 }));
        if (this.fsync) fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      try {
        linkSync(tmp, path); // like git: link, so an object written concurrently by another process wins harmlessly
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
    } catch (e) {
      // A full disk or a read-only folder is the machine's refusal, not a bug: say which.
      const refusal = environmentRefusal(e, (e as NodeJS.ErrnoException).path ?? dir);
      if (refusal) throw new HandoffError(refusal);
      throw e;
    } finally {
      rmSync(tmp, { force: true }); // never leave a temp object behind, whatever failed
    }
    return oid;
  }
}

/**
 * The fan-out folder. Not `recursive: true`: Node reports a full disk there as ENOENT, which
 * would hide the cause. `objects/` itself always exists in a repository.
 */
function makeFanOut(dir: string): void {
  try {
    mkdirSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return;
    if (code === "ENOENT") mkdirSync(dir, { recursive: true });
    else throw e;
  }
}

/** Whether the repository's config asks git to fsync loose objects. */
export function wantsObjectFsync(commonDir: string): boolean {
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
