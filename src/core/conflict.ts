// Conflict preview: which branches of active agents to merge pairwise (and each with the
// integration branch), and how to summarise what `git merge-tree` found. Pure.
import type { RosterEntry } from "./agent-roster.ts";
import { textOrder } from "./text-order.ts";

/** One branch in the preview, with who works on it and what they hold. */
export interface Side {
  branch: string;
  agents: string[];
  tasks: string[];
}

export interface PairResult {
  a: Side;
  b: Side;
  /** `agents`: two agents' branches; `integration`: an agent's branch against the integration branch. */
  kind: "agents" | "integration";
  a_commit: string | null;
  b_commit: string | null;
  /** Paths that would really conflict (empty when the merge is clean). */
  conflicts: string[];
  /** Why the pair could not be merged (missing branch, unrelated histories), or null. */
  error: string | null;
}

export interface ConflictReport {
  /** Null when no integration branch was found: those pairs are not checked, and the summary says so. */
  integration: string | null;
  sides: Side[];
  pairs: PairResult[];
  conflicting: number;
}

/** Active agents grouped by branch; agents without a branch (detached HEAD) have nothing to merge. */
export function sidesOf(roster: RosterEntry[]): Side[] {
  const byBranch = new Map<string, Side>();
  for (const r of roster) {
    if (r.status !== "active" || !r.branch) continue;
    const side = byBranch.get(r.branch) ?? { branch: r.branch, agents: [], tasks: [] };
    side.agents.push(r.agent);
    side.tasks.push(...r.claimed);
    byBranch.set(r.branch, side);
  }
  return [...byBranch.values()].sort((a, b) => textOrder(a.branch, b.branch));
}

/** Every pair of agent branches, then each agent branch against the integration branch. */
export function planPairs(sides: Side[], integration: string | null): { a: Side; b: Side; kind: PairResult["kind"] }[] {
  const work = sides.filter((s) => s.branch !== integration);
  const pairs: { a: Side; b: Side; kind: PairResult["kind"] }[] = [];
  for (let i = 0; i < work.length; i++) for (let j = i + 1; j < work.length; j++) pairs.push({ a: work[i]!, b: work[j]!, kind: "agents" });
  if (integration === null) return pairs;
  const integrationSide = sides.find((s) => s.branch === integration) ?? { branch: integration, agents: [], tasks: [] };
  for (const s of work) pairs.push({ a: s, b: integrationSide, kind: "integration" });
  return pairs;
}

function sideName(s: Side): string {
  return s.agents.length ? `${s.branch} (${s.agents.join(", ")})` : s.branch;
}

/** The one line `status` shows. It never says "no conflicts" about pairs it could not check. */
export function conflictSummaryLine(r: ConflictReport): string {
  const line = summary(r);
  return r.integration === null ? `${line}; against the integration branch: not checked (none found: set git config handoff.integrationBranch)` : line;
}

function summary(r: ConflictReport): string {
  const bad = r.pairs.filter((p) => p.conflicts.length);
  const unchecked = r.pairs.filter((p) => p.error);
  if (!r.pairs.length) return "no active agent branches to compare";
  const skipped = unchecked.length ? `; ${unchecked.length} not checked (${unchecked[0]!.error}${unchecked.length > 1 ? ", ..." : ""})` : "";
  const checked = r.pairs.length - unchecked.length;
  if (!bad.length && !checked) return `not checked: ${unchecked.length} branch pair${unchecked.length === 1 ? "" : "s"} could not be merged (${unchecked[0]!.error})`;
  if (!bad.length) return `no conflicts predicted across ${checked} branch pair${checked === 1 ? "" : "s"}${skipped}`;
  const first = bad[0]!;
  const more = bad.length > 1 ? `, and ${bad.length - 1} more pair${bad.length > 2 ? "s" : ""}` : "";
  return `${bad.length} conflict${bad.length === 1 ? "" : "s"} predicted: ${sideName(first.a)} x ${sideName(first.b)} on ${first.conflicts.slice(0, 3).join(" ")}${first.conflicts.length > 3 ? " …" : ""}${more}${skipped}`;
}

export function pairLine(p: PairResult): string {
  const who = (s: Side) => `${sideName(s)}${s.tasks.length ? ` [${s.tasks.join(" ")}]` : ""}`;
  const verdict = p.error ? `not checked: ${p.error}` : p.conflicts.length ? `CONFLICT ${p.conflicts.join(" ")}` : "clean";
  return `${who(p.a)} x ${who(p.b)}: ${verdict}`;
}
