// What a finished task sent back, as every front end reports it: the output, the result files
// saved to a folder (./handoff-<id>/ by default), the files the worker refused, the failure
// reason. The CLI's `wait` and MCP's `wait_task` both end here.
// The folder is checked first (out-dir.ts: never a link nobody named, never inside a git dir);
// each file is saved by a rename within it, so a symbolic link already there under a result's
// name is replaced, never written through.
import { renameSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { fail } from "../core/errors.ts";
import type { Task } from "../core/task.ts";
import { createExclusive } from "../git/safe-file.ts";
import { uniqueSuffix } from "../git/unique-name.ts";
import type { Store } from "../store/store.ts";
import { resultsRef } from "./bundle.ts";
import { loadResults } from "./handover.ts";
import { prepareOutDir } from "./out-dir.ts";

export interface SavedResults {
  output: string;
  failure_reason: string | null;
  files: { name: string; size: number; path: string }[];
  refused: { name: string; reason: string }[];
  branch: string | null;
  commit: string | null;
  /** The result read is not one the task's completion names (a task finished by an older build). */
  unverified: boolean;
  /** What to tell the reader about where the result came from (an unverified or an ignored one). */
  warnings: string[];
}

/** The folder a task's result files go to when the caller names none: handoff-<id> at `root`. */
export const resultsDir = (root: string, id: string) => join(root, `handoff-${id}`);

/**
 * Reads what the worker sent back for `task` (already fetched by waiting; pulled once more if
 * missing) and, when it is done, writes its files to `outDir`. `named`: the user named the folder
 * (--out), so a link to a folder there is followed; the default folder is never reached through one.
 */
export async function saveResults(store: Store, task: Task, outDir: string, opts: { named: boolean }): Promise<SavedResults> {
  // In review: the work submitted (its output and files), which the reviewer judges.
  const delivered = task.status === "done" || task.status === "failed" || task.status === "review";
  const results = delivered ? await loadResults(store, task) : null;
  const warnings: string[] = [];
  if (results?.unverified) warnings.push(`the result of ${task.id} is whatever ${resultsRef(task.id)} holds: its completion (by an older git-handoff) does not name it, so anyone who can push may have written it`);
  else if (delivered && !results && (await store.readRef(resultsRef(task.id)))) warnings.push(`${resultsRef(task.id)} holds a result the completion of ${task.id} does not name: ignored`);
  const files: SavedResults["files"] = [];
  if ((task.status === "done" || task.status === "review") && results?.files.size) {
    prepareOutDir(outDir, store.repo, opts.named);
    for (const [name, data] of results.files) files.push({ name, size: data.length, path: saveFile(outDir, name, data) });
  }
  return {
    output: results?.record.output ?? task.result?.note ?? "",
    failure_reason: task.status === "done" || task.status === "review" ? null : (task.result?.reason ?? null),
    files,
    refused: results?.record.refused ?? [],
    branch: results?.record.branch ?? null,
    commit: results?.record.commit ?? null,
    unverified: !!results?.unverified,
    warnings,
  };
}

/**
 * Writes `data` as `dir`/`name` without following what is already there: a symbolic link of that
 * name (one a repository can hold, in a folder the user keeps results in) would otherwise carry
 * the write out of the folder, onto whatever it names. The bytes go to a new file of this
 * process's (created exclusively, so never through a link either), renamed over the name: the
 * rename replaces the entry itself, link or file, never what a link points to.
 */
function saveFile(dir: string, name: string, data: Buffer): string {
  const path = join(dir, name);
  // A dotfile: never a result's name (flatNameProblem), so never one being saved.
  const temp = join(dir, `.handoff-save-${uniqueSuffix()}.tmp`);
  createExclusive(temp, data);
  try {
    renameSync(temp, path);
  } catch (e) {
    unlinkSync(temp);
    fail("invalid_input", `cannot save the result file ${JSON.stringify(name)} in ${dir}: ${(e as Error).message}`, { path });
  }
  return path;
}
