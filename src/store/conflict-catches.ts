// Conflicts the preview found, logged for `stats`. The same pair of commits with the same paths is
// logged once per agent: running `conflicts` again does not inflate the count.
import type { ConflictReport } from "../core/conflict.ts";
import { catchEvent, recentCatches, recordCatches } from "./catch-log.ts";
import type { Store } from "./store.ts";

const REPEAT_WINDOW = 50;

function key(commits: string[], paths: string[]): string {
  return `${[...commits].sort().join(",")}|${[...paths].sort().join(",")}`;
}

export async function recordConflicts(store: Store, report: ConflictReport): Promise<number> {
  const found = report.pairs.filter((p) => p.conflicts.length && p.a_commit && p.b_commit);
  if (!found.length) return 0;
  const seen = new Set((await recentCatches(store, REPEAT_WINDOW)).filter((e) => e.type === "conflict_found").map((e) => key(e.commits ?? [], e.paths ?? [])));
  const events = found
    .filter((p) => !seen.has(key([p.a_commit!, p.b_commit!], p.conflicts)))
    .map((p) =>
      catchEvent(store, "conflict_found", {
        task: p.a.tasks[0] ?? p.b.tasks[0] ?? "",
        branches: [p.a.branch, p.b.branch],
        commits: [p.a_commit!, p.b_commit!],
        paths: p.conflicts,
        reason: p.kind,
      }),
    );
  await recordCatches(store, events);
  return events.length;
}
