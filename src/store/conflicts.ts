// Conflict preview over the branches of active agents: real merges in memory, no worktree touched.
import { buildRoster, type Roster } from "../core/agent-roster.ts";
import { planPairs, sidesOf, type ConflictReport, type PairResult } from "../core/conflict.ts";
import type { Task } from "../core/task.ts";
import { previewMerge, type MergePreview } from "../git/merge-tree.ts";
import { listAgents } from "./agent-store.ts";
import type { RefTip } from "../git/refs.ts";
import type { Store } from "./store.ts";
import { listTasks } from "./task-store.ts";

/**
 * `cache` (long-running front ends): merge previews by the pair of commits merged. A pair of
 * commits always merges the same way, so entries never go stale; only a moved tip is merged again.
 */
export type MergeCache = Map<string, MergePreview>;

/**
 * `heads`: the local branches as the caller listed them (`store.listRefs("refs/heads/")`, which
 * `status`'s drift lists too): each side's tip is taken from them, not read ref by ref.
 */
export async function predictConflicts(store: Store, known?: { roster?: Roster; cache?: MergeCache; heads?: readonly RefTip[] }): Promise<ConflictReport> {
  let roster = known?.roster;
  if (!roster) {
    const [{ agents }, { tasks }] = await Promise.all([listAgents(store), listTasks(store, { settled: false })]);
    roster = buildRoster(agents.map((a) => a.record), tasks as Task[], store.now(), store.config);
  }
  const integration = store.config.integrationBranch;
  const sides = sidesOf(roster.agents);
  const planned = planPairs(sides, integration);
  // Each branch's tip read once, before the pairs: the pairs (465 for 30 branches) are then walked
  // without an await each, which in a one-shot process cost more than the cached merges themselves.
  const commits = new Map<string, string | null>();
  // At 10,000 tasks each read of a branch asked for a file that is not there and packed-refs' state again (~50 us).
  const listed = known?.heads && planned.length ? new Map(known.heads.map((h) => [h.name, h.oid])) : null;
  for (const branch of planned.length ? [...sides.map((s) => s.branch), ...(integration !== null ? [integration] : [])] : []) {
    if (!commits.has(branch)) commits.set(branch, listed ? (listed.get(`refs/heads/${branch}`) ?? null) : await store.readRef(`refs/heads/${branch}`));
  }
  // Each result is written out field by field: `{ ...p, more }` adding fields `p` lacks costs V8
  // ~2 us an object in a one-shot process (5x a literal), the most of the preview's time at 465 pairs.
  const pairs: PairResult[] = [];
  for (const p of planned) {
    const ac = commits.get(p.a.branch)!;
    const bc = commits.get(p.b.branch)!;
    if (!ac || !bc) {
      pairs.push({ a: p.a, b: p.b, kind: p.kind, a_commit: ac, b_commit: bc, conflicts: [], error: `no branch ${!ac ? p.a.branch : p.b.branch}` });
      continue;
    }
    const key = `${ac}:${bc}`;
    const hit = known?.cache?.get(key);
    const r = hit ?? (await previewMerge(store.cwd, ac, bc));
    // Only a new merge is added (a hit set again counted as new, and every view rewrote the cache
    // file); a failure may be passing (a spawn refused under load): only results are kept.
    if (known?.cache && !hit && r.ok) known.cache.set(key, r);
    pairs.push({ a: p.a, b: p.b, kind: p.kind, a_commit: ac, b_commit: bc, conflicts: r.ok ? r.conflicts : [], error: r.ok ? null : r.error });
  }
  return { integration, sides, pairs, conflicting: pairs.filter((p) => p.conflicts.length).length };
}
