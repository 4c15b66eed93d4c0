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

export function openMergeCache(store: Store): MergeCacheFile {
  const path = join(store.repo.commonDir, "handoff", "merge-preview.json");
  const stored = new Map<string, MergePreview>();
  try {
    const read = JSON.parse(readSmallFile(path) ?? "null") as { version: number; pairs: Record<string, string[]> } | null;
    if (read?.version === VERSION && read.pairs && typeof read.pairs === "object") {
      for (const [key, conflicts] of Object.entries(read.pairs)) if (Array.isArray(conflicts)) stored.set(key, { ok: true, conflicts });
    }
  } catch {
    /* a damaged cache is only a slower preview: merge again */
  }
  const used = new Map<string, MergePreview>();
  let added = false;
  // A Map the preview reads and fills; it records which entries this run touched.
  const cache = new (class extends Map<string, MergePreview> {
    override get(key: string) {
      const hit = stored.get(key);
      if (hit) used.set(key, hit);
      return hit;
    }
    override set(key: string, value: MergePreview) {
      if (value.ok) {
        used.set(key, value);
        added = true;
      }
      return this;
    }
  })();
  return {
    cache,
    save() {
      if (!added && used.size === stored.size) return;
      const pairs: Record<string, string[]> = {};
      for (const [key, r] of used) if (r.ok) pairs[key] = r.conflicts;
      writeSmallFile(path, JSON.stringify({ version: VERSION, pairs }));
    },
  };
}
