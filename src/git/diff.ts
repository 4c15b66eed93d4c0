import { MAX_DIFF_PATHS, type DiffSummary } from "../core/diff-summary.ts";
import { firstLine, git } from "./run.ts";

/** Files, insertions and deletions from `base` to `commit` (`git diff --numstat`, renames off). */
export async function diffSummary(cwd: string, base: string, commit: string): Promise<DiffSummary> {
  const r = await git(["diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", base, commit, "--"], { cwd });
  if (r.code !== 0) throw new Error(`git diff failed: ${firstLine(r.stderr)}`);
  let files = 0;
  let insertions = 0;
  let deletions = 0;
  const paths: string[] = [];
  // -z: "ins\tdel\tpath\0" per file; binary files show "-" for both counts.
  for (const entry of r.stdout.split("\0")) {
    if (!entry) continue;
    const [ins, del, ...rest] = entry.split("\t");
    files++;
    insertions += Number(ins) || 0;
    deletions += Number(del) || 0;
    if (paths.length < MAX_DIFF_PATHS) paths.push(rest.join("\t"));
  }
  return { base, commit, files, insertions, deletions, paths };
}

/** The best common ancestor of two revisions, or null (unrelated histories, missing branch). */
export async function mergeBase(cwd: string, a: string, b: string): Promise<string | null> {
  const r = await git(["merge-base", "--end-of-options", a, b], { cwd });
  return r.code === 0 ? r.stdout.trim() || null : null;
}
