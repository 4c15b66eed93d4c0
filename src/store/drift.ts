// Drift: what each agent really changes (its branch's commits since its base, the uncommitted
// changes in its worktree, the edits its hooks saw) against what it declared (declaration.ts).
// And tasks whose lease keeps being renewed while the holder's branch stands still.
import { existsSync } from "node:fs";
import type { AgentRecord } from "../core/agent.ts";
import { declarationOf, isPossiblyStuck, MAX_SHOWN_PATHS, undeclaredPaths, type AgentDrift, type Declaration, type DriftView, type StuckTask } from "../core/declaration.ts";
import type { HandoffEvent } from "../core/event.ts";
import { isIgnored } from "../core/lease-policy.ts";
import type { Lease } from "../core/lease.ts";
import type { Task } from "../core/task.ts";
import { mergeBase } from "../git/diff.ts";
import { branchTips, changedBetween, uncommittedPaths, type BranchTip } from "../git/drift-paths.ts";
import { loadPolicy } from "./lease-store.ts";
import type { Store } from "./store.ts";

/** The commit an agent's work is measured from: its tasks' claim base, else where its branch left the integration branch. */
async function baseOf(store: Store, agent: string, tip: string, tasks: Task[]): Promise<string | null> {
  const held = tasks.filter((t) => t.status === "claimed" && t.claim?.agent === agent && t.base);
  if (held.length) return held.map((t) => t.base!).sort()[0]!;
  const integration = store.config.integrationBranch;
  return integration ? mergeBase(store.cwd, tip, `refs/heads/${integration}`) : null;
}

/** What git shows `a` changed: committed since its base on its branch, and uncommitted in its worktree (when on this machine). */
async function changedBy(store: Store, a: AgentRecord, tasks: Task[], tips: Map<string, BranchTip>): Promise<string[]> {
  const paths: string[] = [];
  if (a.branch) {
    const tip = tips.get(a.branch);
    const base = tip ? await baseOf(store, a.agent, tip.commit, tasks) : null;
    if (tip && base) paths.push(...(await changedBetween(store.cwd, base, tip.commit)));
  }
  if (a.worktree && existsSync(a.worktree)) paths.push(...(await uncommittedPaths(a.worktree)));
  return paths;
}

export interface DriftInput {
  agents: AgentRecord[];
  tasks: Task[];
  leases: Lease[];
  /** The indexed log events (log-index.ts): undeclared edits the hooks saw. */
  logged: HandoffEvent[];
}

export async function computeDrift(store: Store, input: DriftInput): Promise<DriftView> {
  const now = store.now();
  const policy = loadPolicy(store);
  const agents: AgentDrift[] = [];
  const tips = await branchTips(store.cwd);
  for (const a of input.agents) {
    if (a.ended_at) continue;
    const d = declarationOf(a.agent, a, input.tasks, input.leases, now);
    if (!d) continue;
    const seen = input.logged.filter((e) => e.type === "undeclared_edit" && e.agent === a.agent && e.at >= a.started_at).flatMap((e) => e.paths ?? []);
    const changed = [...(await changedBy(store, a, input.tasks, tips)), ...seen].filter((p) => !isIgnored(policy, p));
    const out = undeclaredPaths(d, changed);
    if (out.length) agents.push({ agent: a.agent, declared: d.globs, undeclared: out.slice(0, MAX_SHOWN_PATHS), count: out.length });
  }
  return { agents, stuck: stuckTasks(store, input.tasks, tips) };
}

export function stuckTasks(store: Store, tasks: Task[], tips: Map<string, BranchTip>): StuckTask[] {
  const now = store.now();
  const out: StuckTask[] = [];
  for (const t of tasks) {
    const c = t.claim;
    if (t.status !== "claimed" || !c) continue;
    const tip = c.branch ? tips.get(c.branch) : undefined;
    if (!isPossiblyStuck({ task: t, branchMovedAt: tip?.at ?? null }, now, store.config.stuckAfterMs)) continue;
    const since = Math.max(Date.parse(c.claimed_at), tip?.at.getTime() ?? 0);
    out.push({ task: t.id, agent: c.agent, branch: c.branch, since: new Date(since).toISOString(), still_ms: now.getTime() - since });
  }
  return out;
}

export type { AgentDrift, Declaration, DriftView, StuckTask };
