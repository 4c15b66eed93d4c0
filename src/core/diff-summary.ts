import * as z from "zod/mini";
import { count, lazySchema } from "./schema-helpers.ts";
import { objectId } from "./object-id.ts";

/** Paths kept in a diff summary; the counts always cover every file. */
export const MAX_DIFF_PATHS = 50;

/** What changed between a task's base and a commit, as computed by `git diff --numstat`. */
export const DiffSummary = lazySchema(() =>
  z.object({
    base: objectId(),
    commit: objectId(),
    files: count(),
    insertions: count(),
    deletions: count(),
    /** The first MAX_DIFF_PATHS changed paths (binary files count 0/0). */
    paths: z.array(z.string()),
  }),
);
export type DiffSummary = z.infer<typeof DiffSummary>;

export function diffLine(d: DiffSummary): string {
  return `${d.files} file${d.files === 1 ? "" : "s"} changed, +${d.insertions} -${d.deletions} (${d.base.slice(0, 8)}..${d.commit.slice(0, 8)})`;
}
