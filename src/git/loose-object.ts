// Where git keeps a loose object: its id's first two hex digits name a folder, the rest the file;
// and whether a loose file's bytes are the object its name says.
import { createHash } from "node:crypto";
import { inflateSync } from "node:zlib";
import type { GitObject, ObjectType } from "./object-reader.ts";
import { sha1Hex } from "./small-object-codec.ts";

/** The path of the loose object `oid` under the git dir `gitDir` (whether or not it is there). */
export function looseObjectPath(gitDir: string, oid: string): string {
  return `${gitDir}/objects/${oid.slice(0, 2)}/${oid.slice(2)}`;
}

/**
 * The object a loose file's stored bytes hold when it is the object `oid` names (SHA-1, or SHA-256
 * by its length): inflated within `maxBytes`, a well-formed header whose size is the data's, and
 * the id of it all `oid`. null for anything else: bytes from a damaged disk or another machine
 * may inflate to anything, or be another object's.
 */
export function verifiedLoose(stored: Buffer, oid: string, maxBytes: number): GitObject | null {
  try {
    const buf = inflateSync(stored, { maxOutputLength: maxBytes + 64 });
    const nul = buf.indexOf(0);
    if (nul < 0) return null;
    const [type, size] = buf.subarray(0, nul).toString("latin1").split(" ");
    const data = buf.subarray(nul + 1);
    if (!TYPES.has(type!) || size !== String(data.length)) return null;
    const id = oid.length === 40 ? sha1Hex(buf) : createHash("sha256").update(buf).digest("hex");
    return id === oid ? { type: type as ObjectType, data } : null;
  } catch {
    return null; // not a zlib stream, or past the bound
  }
}

const TYPES = new Set(["commit", "tree", "blob", "tag"]);
