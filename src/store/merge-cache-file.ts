// The conflict preview of one-shot commands (`status`), served from .git/handoff/merge-preview.json:
// merge results by the pair of commits merged. Two commits always merge the same way, so an entry
// never goes stale; only a branch whose tip moved is merged again. Entries not used by a run are
// dropped when it saves, so the file holds the pairs of current tips only.
import { join } from "node:path";
import type { MergePreview } from "../git/merge-tree.ts";
import type { MergeCache } from "./conflicts.ts";
import { readSmallFile, writeSmallFile } from "./small-file.ts";
import type { Store } from "./store.ts";

const VERSION = 1;

export interface MergeCacheFile {
  cache: MergeCache;
  /** Writes back the entries this run used, when it merged anything new. */
  save(): void;
}

const pathOf = (store: Store) => join(store.repo.commonDir, "handoff", "merge-preview.json");

/** The merge results the file holds (none when it is missing or damaged). */
export function storedMerges(store: Store): Map<string, MergePreview> {
  const stored = new Map<string, MergePreview>();
  try {
    const read = JSON.parse(readSmallFile(pathOf(store)) ?? "null") as { version: number; pairs: Record<string, string[]> } | null;
    if (read?.version === VERSION && read.pairs && typeof read.pairs === "object") {
      for (const [key, conflicts] of Object.entries(read.pairs)) if (Array.isArray(conflicts)) stored.set(key, { ok: true, conflicts });
    }
  } catch {
    /* a damaged cache is only a slower preview: merge again */
  }
  return stored;
}

/** Replaces the file's entries with `used` (the pairs of the current tips). */
export function saveMerges(store: Store, used: ReadonlyMap<string, MergePreview>): void {
  const pairs: Record<string, string[]> = {};
  for (const [key, r] of used) if (r.ok) pairs[key] = r.conflicts;
  writeSmallFile(pathOf(store), JSON.stringify({ version: VERSION, pairs }));
}

export function openMergeCache(store: Store): MergeCacheFile {
  const stored = storedMerges(store);
  // The keys of the entries this run read, in a list (a preview reads hundreds and usually saves
  // nothing: a Map of them cost a set each); which entries to keep is worked out only to save.
  const hits: string[] = [];
  const merged = new Map<string, MergePreview>();
  // A Map the preview reads and fills; it records which entries this run touched.
  const cache = new (class extends Map<string, MergePreview> {
    override get(key: string) {
      const hit = merged.get(key) ?? stored.get(key);
      if (hit) hits.push(key);
      return hit;
    }
    override set(key: string, value: MergePreview) {
      if (value.ok) merged.set(key, value);
      return this;
    }
  })();
  return {
    cache,
    save() {
      const used = new Map<string, MergePreview>();
      for (const key of hits) used.set(key, (merged.get(key) ?? stored.get(key))!);
      for (const [key, value] of merged) used.set(key, value);
      if (!merged.size && used.size === stored.size) return;
      saveMerges(store, used);
    },
  };
}
