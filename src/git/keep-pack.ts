// Where a fetch's pack, read and checked whole in this process (pack-read.ts), is written. Loose
// objects suit the few a claim or an update brings; a fresh clone's first sync of 1,000 tasks
// brought 3,000 loose files (30,000 at 10,000 tasks, where git's `gc --auto` starts past 6,700 on
// the user's next commit) and took 1.4-1.8x as long as the pack git's own fetch keeps. As `git
// fetch` does past fetch.unpackLimit (100 objects), such a pack goes to `git index-pack --stdin
// --keep`: git writes it and its index, and the .keep file it leaves stops a concurrent `git
// gc`/`repack` from dropping objects no ref reaches yet; it is removed once the tracking refs point
// at them. A clone that asks git to check what it fetches (`fetch.fsckObjects`, else
// `transfer.fsckObjects`) has every pack checked by git as `git fetch` would: index-pack or, below
// the limit, unpack-objects, with `--strict`; what git's checks refuse is not written.
import { unlinkSync } from "node:fs";
import type { ConfigEntry, Wanted } from "./config-scan.ts";
import { firstLine, git } from "./run.ts";

/** git's default fetch.unpackLimit: fetches of fewer objects are written loose, as git writes them. */
export const KEEP_PACK_AT = 100;

export type Written = { ok: true; release(): void } | { ok: false; message: string };

/**
 * Writes `pack` (of `count` objects) into the objects folder `objectsDir` of the repository git
 * finds from `cwd`: kept as a pack from KEEP_PACK_AT objects, else loose through git when `strict`.
 * null: this process writes the objects loose itself (few, and no checks asked for). `release()`
 * once a ref reaches its objects. Not ok: git would not write it (its words; under `strict` the
 * fetch is refused, else the caller writes the objects itself).
 */
export async function writeFetchedPack(cwd: string, objectsDir: string, pack: Buffer, count: number, strict: boolean, timeoutMs: number): Promise<Written | null> {
  const keep = count >= KEEP_PACK_AT;
  if (!keep && !strict) return null;
  const args = keep ? ["index-pack", "--stdin", ...(strict ? ["--strict"] : []), `--keep=git-handoff fetch ${process.pid}`] : ["unpack-objects", "-q", "--strict"];
  const r = await git(args, { cwd, input: pack, timeoutMs });
  if (r.timedOut || r.code !== 0) return { ok: false, message: r.timedOut ? `git ${args[0]} was stopped at the deadline` : firstLine(r.stderr) || `git ${args[0]} exited ${r.code}` };
  if (!keep) return { ok: true, release() {} };
  const name = /^(?:keep|pack)\t([0-9a-f]{40}|[0-9a-f]{64})$/m.exec(r.stdout)?.[1];
  if (!name) return { ok: false, message: `git index-pack named no pack: ${firstLine(r.stdout)}` };
  const file = `${objectsDir}/pack/pack-${name}.keep`;
  return {
    ok: true,
    release() {
      try {
        unlinkSync(file);
      } catch {
        /* already gone: nothing to release */
      }
    },
  };
}

/** Whether this clone asks git to check the objects it fetches: fetch.fsckObjects, else transfer.fsckObjects (git's booleans; the last line wins). */
export function fsckOnFetch(config: (want: Wanted) => ConfigEntry[] | null): boolean {
  const entries = config((s, sub, key) => sub === null && (s === "fetch" || s === "transfer") && key === "fsckobjects") ?? [];
  const last = (section: string) => entries.filter((e) => e.section === section).at(-1);
  const e = last("fetch") ?? last("transfer");
  if (!e) return false;
  // A value git would not read as a boolean makes `git fetch` die: checked, to be safe.
  return !/^(false|no|off|0|)$/i.test(e.value ?? "true");
}
