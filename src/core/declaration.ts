// What an agent said it would touch, and what it touched outside that. Pure. The declaration is
// the union of its session's planned files, the scopes of the tasks it holds and the leases it
// took on purpose; a lease taken by declare-by-doing (an agent's first edit) declares nothing, or
// every edit would declare itself. An agent that declared nothing has nothing to drift from.
import type { AgentRecord } from "./agent.ts";
import { groupDigits } from "./digits.ts";
import { matchesPath } from "./glob-overlap.ts";
import { GRANT_MATCH_BUDGET, LOCAL_MATCH_BUDGET, newMatchBudget, SPENT, withinBudget, type MatchBudget } from "./match-budget.ts";
import { isLeaseLive, type Lease } from "./lease.ts";
import { handoffCommand } from "./shell-quote.ts";
import type { Task } from "./task.ts";

export interface Declaration {
  agent: string;
  /** Every declared glob, deduplicated, in source order (session files, task scopes, leases). */
  globs: string[];
  sources: { session: string[]; tasks: { task: string; scope: string[] }[]; leases: string[] };
}

/** The agent's declaration, or null when it declared nothing at all. */
export function declarationOf(agent: string, record: AgentRecord | null, tasks: Task[], leases: Lease[], now: Date): Declaration | null {
  const session = record && !record.ended_at ? record.files : [];
  const held = tasks.filter((t) => t.status === "claimed" && t.claim?.agent === agent).map((t) => ({ task: t.id, scope: t.scope }));
  const own = leases.filter((l) => l.agent === agent && !l.auto && isLeaseLive(l, now)).map((l) => l.pattern);
  const globs = [...new Set([...session, ...held.flatMap((t) => t.scope), ...own])];
  if (!globs.length) return null;
  return { agent, globs, sources: { session, tasks: held, leases: own } };
}

/**
 * Whether one of `globs` names `path`: the path itself first (free), then the globs within `work`
 * (match-budget.ts), or SPENT when it ran out first. A declaration holds the agent's leases, and a
 * lease set synced from another clone may hold a thousand costly globs in its name (9 s a path).
 */
export function declaredWithin(globs: string[], path: string, work: MatchBudget): boolean | typeof SPENT {
  if (globs.includes(path)) return true;
  return withinBudget(() => globs.some((g) => matchesPath(g, path, work)));
}

export function isDeclared(d: Declaration, path: string, work: MatchBudget = newMatchBudget()): boolean | typeof SPENT {
  return declaredWithin(d.globs, path, work);
}

/**
 * The paths outside the declaration, in the order given; none when there is no declaration. Those
 * not judged within a grant's budget of matching are left out: an agent is never said to have
 * drifted on a path that was not looked at.
 */
export function undeclaredPaths(d: Declaration | null, paths: string[]): string[] {
  if (!d) return [];
  const work = newMatchBudget(GRANT_MATCH_BUDGET);
  return [...new Set(paths)].filter((p) => isDeclared(d, p, work) === false);
}

/** The line a pre-edit hook adds for paths it could not judge against the declaration within its budget (nothing is recorded). */
export function unjudgedNotice(paths: string[]): string {
  return `git-handoff notice: could not tell whether ${paths.join(", ")} ${paths.length === 1 ? "is" : "are"} outside what you declared: your declared globs took more than the budget of matching one check may do (${groupDigits(LOCAL_MATCH_BUDGET)} units), so some were not looked at; not recorded`;
}

/** The one line an agent's context gets the first time it touches a file outside its declaration. */
export function undeclaredNotice(d: Declaration, paths: string[]): string {
  const shown = d.globs.length > 4 ? `${d.globs.slice(0, 4).join(" ")} +${d.globs.length - 4} more` : d.globs.join(" ");
  return `git-handoff notice: ${paths.join(", ")} ${paths.length === 1 ? "is" : "are"} outside what you declared (${shown}); not blocked, recorded. If it is part of your work, declare it: ${handoffCommand("lease", paths[0]!)}`;
}

export interface StuckInput {
  task: Task;
  /** When the holder's branch last moved (its tip's commit time), or null when unknown. */
  branchMovedAt: Date | null;
}

/**
 * A claim whose lease keeps being renewed while its branch stands still: the holder may be stuck
 * (looping, waiting on something it never asked for). Flagged, never acted on. The last renewal is
 * when the current lease was granted (expires_at - ttl); the branch counts as moved at the claim
 * when it has not moved since.
 */
export function isPossiblyStuck(input: StuckInput, now: Date, thresholdMs: number): boolean {
  const c = input.task.claim;
  if (input.task.status !== "claimed" || !c || Date.parse(c.expires_at) <= now.getTime()) return false;
  const claimedAt = Date.parse(c.claimed_at);
  const moved = Math.max(claimedAt, input.branchMovedAt?.getTime() ?? claimedAt);
  const renewedAt = Date.parse(c.expires_at) - c.ttl_ms;
  return now.getTime() - moved > thresholdMs && renewedAt > moved;
}

/** Shown per agent at most; the count says how many there are. */
export const MAX_SHOWN_PATHS = 20;

export interface AgentDrift {
  agent: string;
  declared: string[];
  /** Paths changed outside the declaration (at most MAX_SHOWN_PATHS), and how many in all. */
  undeclared: string[];
  count: number;
}

export interface StuckTask {
  task: string;
  agent: string;
  branch: string | null;
  /** When the branch last moved (or the claim, if later), and for how long it has not. */
  since: string;
  still_ms: number;
}

export interface DriftView {
  agents: AgentDrift[];
  stuck: StuckTask[];
}

