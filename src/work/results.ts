// What a finished task sent back, as every front end reports it: the output, the result files
// saved to a folder (./handoff-<id>/ by default), the files the worker refused, the failure
// reason. The CLI's `wait` and MCP's `wait_task` both end here.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Task } from "../core/task.ts";
import type { Store } from "../store/store.ts";
import { loadResults } from "./handover.ts";

export interface SavedResults {
  output: string;
  failure_reason: string | null;
  files: { name: string; size: number; path: string }[];
  refused: { name: string; reason: string }[];
  branch: string | null;
  commit: string | null;
}

/** The folder a task's result files go to when the caller names none: handoff-<id> at `root`. */
export const resultsDir = (root: string, id: string) => join(root, `handoff-${id}`);

/**
 * Reads what the worker sent back for `task` (already fetched by waiting; pulled once more if
 * missing) and, when it is done, writes its files to `outDir`.
 */
export async function saveResults(store: Store, task: Task, outDir: string): Promise<SavedResults> {
  const ended = task.status === "done" || task.status === "failed";
  const results = ended ? ((await loadResults(store, task.id, { pull: false })) ?? (await loadResults(store, task.id))) : null;
  const files: SavedResults["files"] = [];
  if (task.status === "done" && results?.files.size) {
    mkdirSync(outDir, { recursive: true });
    for (const [name, data] of results.files) {
      const path = join(outDir, name);
      writeFileSync(path, data);
      files.push({ name, size: data.length, path });
    }
  }
  return {
    output: results?.record.output ?? task.result?.note ?? "",
    failure_reason: task.status === "done" ? null : (task.result?.reason ?? null),
    files,
    refused: results?.record.refused ?? [],
    branch: results?.record.branch ?? null,
    commit: results?.record.commit ?? null,
  };
}
