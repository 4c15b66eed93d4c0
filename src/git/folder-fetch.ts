// A fetch of a few refs from a sync remote that is a folder on this disk, read from its files: the
// objects the new tips have beyond the tracked ones, found by the walk a push makes the other way
// (push-objects.ts), each read as a loose object of the remote's, inflated within a bound and
// hashed here. A sync that brings one change by path started `git upload-pack` (and its
// `pack-objects`) for three or four small objects: 37 of the 46 ms between the fetch's lock and
// the moved refs in a traced run. Pushes to such a remote, this process's as receive-pack's for a
// few objects, leave them loose; anything else (an object packed there or missing, a merge, a
// history of more than push-objects.ts's bounds, more objects than are written loose, a file not
// a plain one, an object past the size read here or not the object its name says) returns null,
// and the fetch is upload-pack's as before, with its bounded pack reading (stream-remote.ts).
// Only the plain case stream-remote.ts starts upload-pack for is read (path-remote.ts's: a
// repository of this user's on a local file system; no protocol or URL settings git would act
// on), and only where git is not asked to check fetched objects (fetch.fsckObjects).
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import type { GitObject } from "./object-reader.ts";
import { looseObjectPath, verifiedLoose } from "./loose-object.ts";
import type { PathRemoteSource } from "./path-remote.ts";
import { missingObjects } from "./push-objects.ts";
import { streamRemoteStatus } from "./stream-remote.ts";

/** Objects read from the remote's files at most this large (a record is a few hundred bytes). */
const MAX_OBJECT = 1024 * 1024;
/** Fewer than this many objects are read here (keep-pack.ts keeps a fetch of 100 or more as a pack). */
const MAX_FOUND = 100;

/**
 * The objects each update's `new` tip has beyond its `expected` one (which this clone has whole),
 * read from the remote's folder and this clone's own objects (`here`: never a git process); null
 * when this fetch is upload-pack's (see the head of the file).
 */
export async function fetchFromFolder(source: PathRemoteSource, remote: string, updates: { new: string; expected: string | null }[], here: (oid: string) => GitObject | undefined): Promise<Map<string, GitObject> | null> {
  // The folder upload-pack would be started on (its name is the git dir), under the same settings.
  const target = updates.length ? streamRemoteStatus(source, remote) : null;
  if (!target?.inProcess || target.kind !== "path") return null;
  const gitDir = target.name;
  const width = source.format === "sha256" ? 32 : 20;
  const found = await missingObjects(
    {
      format: source.format,
      // This clone's copy first: the tracked tips' commits and trees the walk compares with are here.
      read: async (oid) => here(oid) ?? theirLoose(gitDir, oid, width),
      recent: () => false,
    },
    updates,
    // A first sync's hundreds of tasks stop the walk here, not after thousands of reads.
    MAX_FOUND - 1,
  );
  return found;
}

/** The remote's loose object `oid`, checked against its name; null for anything else. */
function theirLoose(gitDir: string, oid: string, width: number): GitObject | null {
  if (oid.length !== width * 2) return null;
  let fd: number;
  try {
    // Not through a link, and never blocking on a FIFO: only a plain file is read.
    fd = openSync(looseObjectPath(gitDir, oid), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_OBJECT + 1024) return null;
    const raw = Buffer.alloc(st.size);
    let n = 0;
    while (n < raw.length) {
      const got = readSync(fd, raw, n, raw.length - n, n);
      if (got === 0) return null;
      n += got;
    }
    // A small file may inflate to gigabytes: within the bound, and the object its name says.
    const o = verifiedLoose(raw, oid, MAX_OBJECT);
    return o && o.type !== "tag" ? o : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

