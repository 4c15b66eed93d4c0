// Conflict preview over the branches of active agents: real merges in memory, no worktree touched.
import { buildRoster, type Roster } from "../core/agent-roster.ts";
import { planPairs, sidesOf, type ConflictReport, type PairResult } from "../core/conflict.ts";
import type { Task } from "../core/task.ts";
import { previewMerge, type MergePreview } from "../git/merge-tree.ts";
import { listAgents } from "./agent-store.ts";
import type { Store } from "./store.ts";
import { listTasks } from "./task-store.ts";

/**
 * `cache` (long-running front ends): merge previews by the pair of commits merged. A pair of
 * commits always merges the same way, so entries never go stale; only a moved tip is merged again.
 */
export type MergeCache = Map<string, MergePreview>;

export async function predictConflicts(store: Store, known?: { roster?: Roster; cache?: MergeCache }): Promise<ConflictReport> {
  let roster = known?.roster;
  if (!roster) {
    const [{ agents }, { tasks }] = await Promise.all([listAgents(store), listTasks(store, { settled: false })]);
    roster = buildRoster(agents.map((a) => a.record), tasks as Task[], store.now(), store.config);
  }
  const integration = store.config.integrationBranch;
  const sides = sidesOf(roster.agents);
  const commits = new Map<string, string | null>();
  const commitOf = async (branch: string) => {
    if (!commits.has(branch)) commits.set(branch, await store.readRef(`refs/heads/${branch}`));
    return commits.get(branch)!;
  };
  const pairs: PairResult[] = [];
  for (const p of planPairs(sides, integration)) {
    const [ac, bc] = [await commitOf(p.a.branch), await commitOf(p.b.branch)];
    if (!ac || !bc) {
      pairs.push({ ...p, a_commit: ac, b_commit: bc, conflicts: [], error: `no branch ${!ac ? p.a.branch : p.b.branch}` });
      continue;
    }
    const key = `${ac}:${bc}`;
    const hit = known?.cache?.get(key);
    const r = hit ?? (await previewMerge(store.cwd, ac, bc));
    // Only a new merge is added (a hit set again counted as new, and every view rewrote the cache
    // file); a failure may be passing (a spawn refused under load): only results are kept.
    if (known?.cache && !hit && r.ok) known.cache.set(key, r);
    pairs.push({ ...p, a_commit: ac, b_commit: bc, conflicts: r.ok ? r.conflicts : [], error: r.ok ? null : r.error });
  }
  return { integration, sides, pairs, conflicting: pairs.filter((p) => p.conflicts.length).length };
}
