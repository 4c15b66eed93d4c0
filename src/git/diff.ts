import { MAX_DIFF_PATHS, type DiffSummary } from "../core/diff-summary.ts";
import { isObjectId } from "../core/object-id.ts";
import { firstLine, git } from "./run.ts";

/**
 * Files, insertions and deletions from `base` to `commit` (`git diff --numstat`, renames off).
 * Both are full object ids (a base may come from another clone's record): anything else is refused
 * before git sees it, and `--end-of-options` keeps them revisions in any case.
 */
export async function diffSummary(cwd: string, base: string, commit: string): Promise<DiffSummary> {
  if (!isObjectId(base) || !isObjectId(commit)) throw new Error(`git diff refused: ${JSON.stringify((isObjectId(base) ? commit : base).slice(0, 80))} is not an object id`);
  const r = await git(["diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", "--end-of-options", base, commit, "--"], { cwd });
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
  const out = r.stdout.trim();
  return r.code === 0 && isObjectId(out) ? out : null;
}
