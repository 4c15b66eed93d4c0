// Loose objects whose file does not hold what its name says (a damaged disk, a hand edit). This
// process's object reader looks at loose objects before packs, so such a file would hide the good
// copy a repair fetched, and git's index-pack refuses a pack holding an object whose loose copy it
// cannot read. A repair moves them aside, not away: into .git/handoff/damaged-objects/, where a
// person can still look at them (git never reads that folder).
import { existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { looseObjectPath, verifiedLoose } from "./loose-object.ts";
import { PACK_LIMITS } from "./pack-limits.ts";

/** Where damaged loose objects are moved, under the git dir `commonDir`. */
export function damagedObjectsDir(commonDir: string): string {
  return `${commonDir}/handoff/damaged-objects`;
}

/**
 * Of `oids` (SHA-1, or SHA-256 by their length), those whose loose file under `commonDir` is there and does not hold the
 * object its name says, moved aside (damagedObjectsDir); returns their ids. A file that cannot be
 * moved stays, and is not named.
 */
export function setAsideDamagedLoose(commonDir: string, oids: Iterable<string>): string[] {
  const moved: string[] = [];
  for (const oid of oids) {
    const path = looseObjectPath(commonDir, oid);
    if (!existsSync(path) || holds(path, oid)) continue;
    try {
      mkdirSync(damagedObjectsDir(commonDir), { recursive: true });
      renameSync(path, `${damagedObjectsDir(commonDir)}/${oid}-${Date.now()}`);
      moved.push(oid);
    } catch {
      /* left where it is: the repair says the ref is still incomplete */
    }
  }
  return moved;
}

/** Whether the loose file at `path` inflates to a well-formed object whose id is `oid`. */
function holds(path: string, oid: string): boolean {
  try {
    // A damaged file may inflate to anything: no more than the largest object a fetch takes.
    return verifiedLoose(readFileSync(path), oid, PACK_LIMITS.objectBytes) !== null;
  } catch {
    return false;
  }
}
