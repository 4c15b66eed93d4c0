// Packing the refs sync leaves behind. Every task is two loose ref files in a synced clone (its
// ref and its tracking ref), and git reads every loose ref on a plain `git fetch`: at thousands
// of tasks the user's own fetch slows down severalfold. `git pack-refs --all` (what `git gc` does
// anyway) moves them into packed-refs; sync runs it once enough loose refs under refs/handoff*
// have piled up, so a sync with nothing new costs no more than before.
import { join } from "node:path";
import { walkFiles } from "../git/file-walk.ts";
import { git } from "../git/run.ts";
import type { Store } from "../store/store.ts";

/** Loose refs under refs/handoff* at which sync packs. */
export const PACK_LOOSE_AT = 256;

/** Loose ref files under refs/handoff*, counted up to `limit`. */
export function looseHandoffRefs(store: Store, limit = PACK_LOOSE_AT): number {
  const refs = join(store.repo.storeDir, "refs");
  let n = 0;
  for (const top of ["handoff", "handoff-remotes"]) {
    // Counted already by the read the view made (the event index's stamp): not walked again.
    if (top === "handoff" && store.looseHandoffCounted !== null) {
      n += store.looseHandoffCounted;
      if (n >= limit) break;
      continue;
    }
    walkFiles(join(refs, top), (_path, name) => {
      if (!name.endsWith(".lock")) n++;
      return n < limit;
    });
    if (n >= limit) break;
  }
  return n;
}

/** Packs the clone's refs when enough loose handoff refs piled up; true when it packed. */
export async function packIfLoose(store: Store, limit = PACK_LOOSE_AT): Promise<boolean> {
  if (!store.usesRefFiles || looseHandoffRefs(store, limit) < limit) return false;
  // A concurrent writer holding packed-refs.lock makes git give up after core.packedRefsTimeout:
  // packing is an optimisation, so that is not an error; the next sync packs.
  const r = await git(["pack-refs", "--all"], { cwd: store.storeCwd });
  // A separate store is nobody's fetch's concern (no graph needed), and no command of the user's
  // ever collects its loose objects: its own `git gc --auto` does, once there are enough of them.
  if (r.code === 0) await (store.separateStore ? git(["gc", "--auto", "--quiet"], { cwd: store.storeCwd }) : graphHandoffCommits(store));
  return r.code === 0;
}

/**
 * A commit-graph layer for the handoff refs' commits, written when their refs are packed. Even a
 * plain `git fetch` with nothing new checks connectivity with `rev-list --not --all`, which parses
 * every ref's commit: at 5,000 tasks (10,000 refs) that check was most of what a fetch cost over
 * a clone without them, and a commit-graph makes each parse a lookup (fetch 28 -> 21 ms there,
 * 11 ms without handoff refs). Only these commits go in (`--stdin-commits`, a new `--split`
 * layer that git merges as it would its own), so the code's history is never walked here; a user
 * who turned commit-graphs off (`core.commitGraph false`) gets none.
 */
async function graphHandoffCommits(store: Store): Promise<void> {
  const off = await git(["config", "--type=bool", "--get", "core.commitGraph"], { cwd: store.storeCwd });
  if (off.stdout.trim() === "false") return;
  const tips = new Set<string>();
  for (const prefix of ["refs/handoff/", "refs/handoff-remotes/"]) for (const t of await store.listRefs(prefix)) tips.add(t.oid);
  if (!tips.size) return;
  // Best effort: a graph not written only leaves the user's fetch as it was.
  await git(["commit-graph", "write", "--split", "--stdin-commits", "--no-progress"], { cwd: store.storeCwd, input: [...tips].join("\n") + "\n" });
}
