// A fetch's pack kept as one pack, not as loose objects. Loose objects suit the few a claim or an
// update brings; a fresh clone's first sync of 1,000 tasks brought 3,000 loose files (30,000 at
// 10,000 tasks, where git's `gc --auto` starts past 6,700 on the user's next commit) and took
// 1.4-1.8x as long as the pack git's own fetch keeps. As `git fetch` does past fetch.unpackLimit
// (100 objects), the pack, already read and checked whole here (pack-read.ts), is handed to
// `git index-pack --stdin --keep`: git writes it and its index, and the .keep file it leaves stops
// a concurrent `git gc`/`repack` from dropping objects no ref reaches yet. It is removed once the
// tracking refs point at them.
import { unlinkSync } from "node:fs";
import { git } from "./run.ts";

/** git's default fetch.unpackLimit: fetches of fewer objects are written loose, as git writes them. */
export const KEEP_PACK_AT = 100;

/**
 * Writes `pack` into the objects folder `objectsDir` of the repository git finds from `cwd`.
 * `release()` once a ref reaches its objects; null when git would not take it (the caller writes
 * the objects loose instead).
 */
export async function keepPack(cwd: string, objectsDir: string, pack: Buffer, timeoutMs: number): Promise<{ release(): void } | null> {
  const r = await git(["index-pack", "--stdin", `--keep=git-handoff fetch ${process.pid}`], { cwd, input: pack, timeoutMs });
  const name = r.code === 0 && !r.timedOut ? /^(?:keep|pack)\t([0-9a-f]{40}|[0-9a-f]{64})$/m.exec(r.stdout)?.[1] : undefined;
  if (!name) return null;
  const keep = `${objectsDir}/pack/pack-${name}.keep`;
  return {
    release() {
      try {
        unlinkSync(keep);
      } catch {
        /* already gone: nothing to release */
      }
    },
  };
}
