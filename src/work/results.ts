// What a finished task sent back, as every front end reports it: the output, the result files
// saved to a folder (./handoff-<id>/ by default), the files the worker refused, the failure
// reason. The CLI's `wait` and MCP's `wait_task` both end here.
// Each file is saved by a rename within the folder, so a symbolic link already there under a
// result's name is replaced, never written through.
import { lstatSync, mkdirSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fail } from "../core/errors.ts";
import type { Task } from "../core/task.ts";
import { uniqueSuffix } from "../git/unique-name.ts";
import type { Store } from "../store/store.ts";
import { resultsRef } from "./bundle.ts";
import { loadResults } from "./handover.ts";

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
 * missing) and, when it is done, writes its files to `outDir`.
 */
export async function saveResults(store: Store, task: Task, outDir: string): Promise<SavedResults> {
  const ended = task.status === "done" || task.status === "failed";
  const results = ended ? await loadResults(store, task) : null;
  const warnings: string[] = [];
  if (results?.unverified) warnings.push(`the result of ${task.id} is whatever ${resultsRef(task.id)} holds: its completion (by an older git-handoff) does not name it, so anyone who can push may have written it`);
  else if (ended && !results && (await store.readRef(resultsRef(task.id)))) warnings.push(`${resultsRef(task.id)} holds a result the completion of ${task.id} does not name: ignored`);
  const files: SavedResults["files"] = [];
  if (task.status === "done" && results?.files.size) {
    mkdirSync(outDir, { recursive: true });
    for (const [name, data] of results.files) files.push({ name, size: data.length, path: saveFile(outDir, name, data) });
  }
  return {
    output: results?.record.output ?? task.result?.note ?? "",
    failure_reason: task.status === "done" ? null : (task.result?.reason ?? null),
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
  writeFileSync(temp, data, { flag: "wx" });
  try {
    renameSync(temp, path);
  } catch (e) {
    unlinkSync(temp);
    fail("invalid_input", `cannot save the result file ${JSON.stringify(name)} in ${dir}: ${(e as Error).message}`, { path });
  }
  return path;
}

/**
 * Why results cannot be saved to the folder `path` (null: they can): it, or the nearest part of it
 * that exists, must be a folder (a link to one is followed: the folder was named by the user).
 * Asked before anything is written, so that a task's work is not done for nothing.
 */
export function outDirProblem(path: string): string | null {
  for (let at = path; ; at = dirname(at)) {
    try {
      lstatSync(at);
    } catch {
      if (dirname(at) === at) return null;
      continue; // not there: made when the results are saved
    }
    const what = at === path ? "it" : at;
    try {
      return statSync(at).isDirectory() ? null : `${what} is not a folder`;
    } catch {
      return `${what} is a symbolic link to nothing`;
    }
  }
}
