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
import type { ViewTask } from "./view-task.ts";

export interface Declaration {
  agent: string;
  /** Every declared glob, deduplicated, in source order (session files, task scopes, leases). */
  globs: string[];
  sources: { session: string[]; tasks: { task: string; scope: string[] }[]; leases: string[] };
}

/** The agent's declaration, or null when it declared nothing at all. */
export function declarationOf(agent: string, record: AgentRecord | null, tasks: ViewTask[], leases: Lease[], now: Date): Declaration | null {
  const session = sessionFiles(record);
  const held = tasks.filter((t) => heldBy(t, agent)).map((t) => ({ task: t.id, scope: t.scope }));
  const own = leases.filter((l) => declaresLease(l, agent, now)).map((l) => l.pattern);
  const globs = unionOf(session, held.flatMap((t) => t.scope), own);
  if (!globs.length) return null;
  return { agent, globs, sources: { session, tasks: held, leases: own } };
}

/**
 * The globs of declarationOf, from the scopes of the tasks the agent holds (`heldScopes`: each
 * held task's scope in the tasks' order, repeats or not) instead of the tasks: a view that judges
 * an agent's changes needs no record of its tasks.
 */
export function declaredGlobs(agent: string, record: AgentRecord | null, heldScopes: readonly string[], leases: Lease[], now: Date): string[] {
  return unionOf(sessionFiles(record), heldScopes, leases.filter((l) => declaresLease(l, agent, now)).map((l) => l.pattern));
}

/** Each glob once, in source order (session files, task scopes, leases). */
function unionOf(session: readonly string[], scopes: readonly string[], leases: readonly string[]): string[] {
  return [...new Set([...session, ...scopes, ...leases])];
}

/**
 * Whether declarationOf finds anything declared, without building the declaration: a view asks
 * it of every agent first, and builds the declaration only for those with changed paths.
 * `holdsScope`: whether a task the agent holds (stored as claimed) has a scope.
 */
export function declaresAnything(agent: string, record: AgentRecord | null, holdsScope: boolean, leases: Lease[], now: Date): boolean {
  return sessionFiles(record).length > 0 || holdsScope || leases.some((l) => declaresLease(l, agent, now));
}

function sessionFiles(record: AgentRecord | null): string[] {
  return record && !record.ended_at ? record.files : [];
}

function heldBy(t: ViewTask, agent: string): boolean {
  return t.status === "claimed" && t.claim?.agent === agent;
}

/** A lease taken on purpose and live: one by declare-by-doing declares nothing. */
function declaresLease(l: Lease, agent: string, now: Date): boolean {
  return l.agent === agent && !l.auto && isLeaseLive(l, now);
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

export function isDeclared(d: Pick<Declaration, "globs">, path: string, work: MatchBudget = newMatchBudget()): boolean | typeof SPENT {
  return declaredWithin(d.globs, path, work);
}

/** What judging changed paths against a declaration found. */
export interface PathsJudged {
  /** Outside the declaration, in the order given. */
  undeclared: string[];
  /** Not judged within the budget: never called undeclared, but counted, so no view passes them over unsaid. */
  unjudged: string[];
}

/**
 * Judges `paths` (each once) against the declaration within one grant's budget of matching shared by
 * all of them; no declaration, nothing outside it. A path not judged is never drift: an agent is
 * never said to have drifted on a path that was not looked at.
 */
export function judgePaths(d: Pick<Declaration, "globs"> | null, paths: string[]): PathsJudged {
  const out: PathsJudged = { undeclared: [], unjudged: [] };
  if (!d) return out;
  const work = newMatchBudget(DRIFT_BUDGET.units);
  for (const p of new Set(paths)) {
    const v = isDeclared(d, p, work);
    if (v === SPENT) out.unjudged.push(p);
    else if (!v) out.undeclared.push(p);
  }
  return out;
}

/** The paths outside the declaration, in the order given (judgePaths, without those not judged). */
export function undeclaredPaths(d: Declaration | null, paths: string[]): string[] {
  return judgePaths(d, paths).undeclared;
}

/** The budget judgePaths spends (a heartbeat's and a drift view's), in the words of a note. */
export const DRIFT_BUDGET = { units: GRANT_MATCH_BUDGET, whose: "a drift check" } as const;
/** The pre-edit hook's: a check's. */
const NOTICE_BUDGET = { units: LOCAL_MATCH_BUDGET, whose: "one check" } as const;

/**
 * The one wording of paths not judged against a declaration (the hook's notice, the heartbeat's
 * note, `status`): `what` names the paths (a list, or pathCount), `who` the agent (null: the caller),
 * `outcome` what was done with them.
 */
export function unjudgedWords(what: string, many: boolean, who: string | null, budget: { units: number; whose: string }, outcome: string): string {
  const [agent, its] = who === null ? ["you", "your"] : [who, "its"];
  return `could not tell whether ${what} ${many ? "are" : "is"} outside what ${agent} declared: ${its} declared globs took more than the budget of matching ${budget.whose} may do (${groupDigits(budget.units)} units), so some were not looked at; ${outcome}`;
}

/** `N path(s) <changed>`: a count for unjudgedWords. */
export function pathCount(n: number, changed: string): string {
  return `${groupDigits(n)} path${n === 1 ? "" : "s"} ${changed}`;
}

/** The line a pre-edit hook adds for paths it could not judge against the declaration within its budget (nothing is recorded). */
export function unjudgedNotice(paths: string[]): string {
  return `git-handoff notice: ${unjudgedWords(paths.join(", "), paths.length !== 1, null, NOTICE_BUDGET, "not recorded")}`;
}

/** The one line an agent's context gets the first time it touches a file outside its declaration. */
export function undeclaredNotice(d: Declaration, paths: string[]): string {
  const shown = d.globs.length > 4 ? `${d.globs.slice(0, 4).join(" ")} +${d.globs.length - 4} more` : d.globs.join(" ");
  return `git-handoff notice: ${paths.join(", ")} ${paths.length === 1 ? "is" : "are"} outside what you declared (${shown}); not blocked, recorded. If it is part of your work, declare it: ${handoffCommand("lease", paths[0]!)}`;
}

export interface StuckInput {
  task: ViewTask;
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
  return stuckSince(input, now, thresholdMs) !== null;
}

/**
 * For a claim isPossiblyStuck flags: since when its branch stood still (the claim's time, if the
 * branch last moved before it), and whether that is the claim's time; else null. Each time is
 * parsed once: `status` asks this of every claim (5,000 at 10,000 tasks).
 */
export function stuckSince(input: StuckInput, now: Date, thresholdMs: number): { since: number; claimed: boolean } | null {
  const c = input.task.claim;
  if (input.task.status !== "claimed" || !c) return null;
  const claimedAt = Date.parse(c.claimed_at);
  const since = stuckSinceAt(claimedAt, c.ttl_ms, Date.parse(c.expires_at), input.branchMovedAt?.getTime() ?? null, now.getTime(), thresholdMs);
  return Number.isNaN(since) ? null : { since, claimed: since === claimedAt };
}

/**
 * stuckSince of a claim (stored as claimed) by its times in ms: claimed, its ttl, its expiry, the
 * branch's last move (null: none known) and now. NaN when not stuck; the claim's time is the answer
 * when the branch last moved before it. A number, not an object: `status` asks it of 5,000 claims.
 */
export function stuckSinceAt(claimedAt: number, ttlMs: number, expires: number, branchMovedAt: number | null, now: number, thresholdMs: number): number {
  if (expires <= now) return NaN;
  const moved = branchMovedAt === null ? claimedAt : Math.max(claimedAt, branchMovedAt);
  return now - moved > thresholdMs && expires - ttlMs > moved ? moved : NaN;
}

/** Shown per agent at most; the count says how many there are. */
export const MAX_SHOWN_PATHS = 20;

export interface AgentDrift {
  agent: string;
  declared: string[];
  /** Paths changed outside the declaration (at most MAX_SHOWN_PATHS), and how many in all. */
  undeclared: string[];
  count: number;
  /** How many changed paths were not judged within the budget (judgePaths): in neither of the above. */
  unjudged: number;
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
  /** How many claims are possibly stuck when `stuck` holds only the first of them (a bounded text view); absent: `stuck` is all. */
  stuck_total?: number;
}

