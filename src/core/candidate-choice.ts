// Which ready task a `claim --next` caller goes after. If every caller took the single best one,
// all but one would lose the race, refresh, and all move on to the same next one: a stampede in
// which one clone can starve. Instead each caller draws at random among the best few, weighted
// towards higher priority and older tasks, and the pool widens with every race this call lost.
// Pure: the random draw is a parameter.
import type { Task } from "./task.ts";
import { classifyAgent, type AgentRecord, type AgentThresholds } from "./agent.ts";

export const MAX_POOL = 64;

export interface CandidateChoice {
  now: Date;
  /** A number in [0, 1): the caller's random draw. */
  random: number;
  /** How many other agents are seen taking work (live claims held by others, recent rivals): the likely racers. */
  contenders: number;
  /** Races this call already lost: each one doubles the pool. */
  lost: number;
}

/**
 * How many of the best candidates a caller draws from: two per likely racer (so two racers rarely
 * draw the same one) plus one, doubled by every race lost. A caller that sees nobody else takes
 * the queue in order (the handover queue promises highest priority, then oldest) until it loses a
 * race. Racers need not hold a claim to race (work can be done in a moment), so the caller counts
 * as racers the largest of: agents holding live claims, agents with an active session on the
 * roster, and those that recently beat its clone to a task (rivals.ts).
 */
export function poolSize(available: number, contenders: number, lost: number): number {
  const base = 2 * contenders + 1;
  return Math.min(available, MAX_POOL, base * 2 ** Math.min(lost, 6));
}

/**
 * A task's weight in the draw: each priority step below the best halves it; age adds up to as
 * much again (the oldest in the pool weighs twice the newest of the same priority).
 */
export function candidateWeight(task: Task, topPriority: number, oldestAgeMs: number, now: Date): number {
  const below = Math.min(30, Math.max(0, topPriority - task.priority));
  const age = Math.max(0, now.getTime() - Date.parse(task.created_at));
  const ageFactor = oldestAgeMs > 0 ? 1 + Math.min(1, age / oldestAgeMs) : 1;
  return ageFactor / 2 ** below;
}

/**
 * One candidate from `best` (ordered best first, as claimCandidates orders them), or undefined
 * when there is none.
 */
export function chooseCandidate(best: Task[], c: CandidateChoice): Task | undefined {
  const pool = best.slice(0, poolSize(best.length, c.contenders, c.lost));
  if (pool.length <= 1) return pool[0];
  const top = Math.max(...pool.map((t) => t.priority));
  const oldest = Math.max(...pool.map((t) => c.now.getTime() - Date.parse(t.created_at)));
  const weights = pool.map((t) => candidateWeight(t, top, oldest, c.now));
  const total = weights.reduce((a, b) => a + b, 0);
  let point = Math.min(Math.max(c.random, 0), 1 - Number.EPSILON) * total;
  for (let i = 0; i < pool.length; i++) {
    point -= weights[i]!;
    if (point < 0) return pool[i];
  }
  return pool[pool.length - 1];
}

/** Agents other than `self` holding a live claim among `tasks`: who else is likely claiming. */
export function contendersAmong(tasks: readonly Task[], self: string, now: Date): number {
  const agents = new Set<string>();
  for (const t of tasks) {
    if (t.status === "claimed" && t.claim && t.claim.agent !== self && Date.parse(t.claim.expires_at) > now.getTime()) agents.add(t.claim.agent);
  }
  return agents.size;
}

/**
 * Agents other than `self` with an open, active session on the roster: they may be claiming even
 * before they hold anything (the first claims of a team that starts at once all go for the best
 * task otherwise). A task's creator without a session (`task add`, `wait`) is not counted.
 */
export function activeOthers(agents: AgentRecord[], self: string, now: Date, t: AgentThresholds): number {
  return agents.filter((a) => a.agent !== self && classifyAgent(a, now, t) === "active").length;
}
