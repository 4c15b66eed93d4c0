// `check`: may the calling agent touch these paths? Per path one answer: deny (inside another
// agent's exclusive lease), warn (another agent leases this very file), info (another agent leases
// a folder or glob containing it) or ok, each naming holder, task, expiry and what to do. Through
// a sync remote another agent's lease counts for the takeover grace past its expiry, as every
// write of the lease set counts it (lease-ops.ts): a check never calls free what a write refuses.
import { loopFirst } from "./char-scan.ts";
import type { Suggestion } from "./errors.ts";
import { formatDuration, formatUntil } from "./duration.ts";
import { matchesPath, overlapWitness } from "./glob-overlap.ts";
import { expiryOf, graceUntil, isLeaseLiveFor, type Lease } from "./lease.ts";
import { holderSuggestions } from "./lease-ops.ts";
import { applyMode, isIgnored, worst, type LeasePolicy, type Verdict } from "./lease-policy.ts";
import { BUDGET_NOTE, newMatchBudget, SPENT, withinBudget, type MatchBudget } from "./match-budget.ts";
import { isGlob } from "./paths.ts";

export interface Holder {
  agent: string;
  task: string | null;
  pattern: string;
  exclusive: boolean;
  expires_at: string;
  reason: string | null;
  worktree: string | null;
  branch: string | null;
  /** What this lease alone would answer, before the mode is applied. */
  verdict: Exclude<Verdict, "ok">;
  /** Expired by this clock, but standing for the takeover grace until then (clock skew). */
  grace_until?: string;
}

export interface PathAnswer {
  path: string;
  verdict: Verdict;
  ignored: boolean;
  holders: Holder[];
  message: string;
  suggestions: Suggestion[];
}

export interface CheckContext {
  agent: string;
  now: Date;
  policy: LeasePolicy;
  /**
   * Why the lease set read may be stale (the remote's is from a newer git-handoff, kept unread):
   * a path it finds free, or only near a lease, is answered `warn` with this, never `ok`.
   */
  stale?: string;
  /** The glob matching the whole check may do (checkPaths sets one); past it, a path is answered as for `stale`. */
  budget?: MatchBudget;
  /**
   * How long past its expiry another agent's lease still stands (clock-skew.ts: with a sync remote,
   * max_clock_skew plus this clone's offset), as OpContext's: a write would refuse it that long.
   */
  takeoverGraceMs?: number;
}

/**
 * The characters isGlob (core/paths.ts) looks for, as a regular expression: asked of every lease a
 * check looks at. isGlob's loop over each pattern's characters, run twice a lease (here and in
 * matchesPath), made V8 mark it for optimisation in a cold `check` past ~40 leases (its own
 * counter: ~900 turns of the loop), and the compile that follows on another thread cost ~1.5-2 ms
 * of the process's CPU, more than the whole loop over the leases (~0.4 ms). A regular expression
 * runs outside that counter. The first few leases are asked with the loop all the same
 * (char-scan.ts loopFirst): the pre-edit hook looks at a few leases near the path, and the
 * pattern's two compiles (at its first run and its second) cost it more than those turns.
 */
const GLOB_CHAR = loopFirst(isGlob, /[*?[\]{}]/);

function relation(lease: Lease, path: string, pathIsGlob: boolean, work?: MatchBudget): Exclude<Verdict, "ok"> | null {
  // A literal path is inside a literal pattern only when they are equal (matchesPath's own answer).
  const hit = pathIsGlob ? overlapWitness(path, lease.pattern, work) !== null : lease.pattern === path || (GLOB_CHAR(lease.pattern) && matchesPath(lease.pattern, path, work));
  if (!hit) return null;
  if (lease.exclusive) return "deny";
  return lease.pattern === path ? "warn" : "info";
}

export function checkPath(path: string, leases: Lease[], ctx: CheckContext): PathAnswer {
  if (isIgnored(ctx.policy, path, ctx.budget)) {
    return { path, verdict: "ok", ignored: true, holders: [], message: `${path}: ignored by policy (never leased or checked)`, suggestions: [] };
  }
  const holders: Holder[] = [];
  let raw: Verdict = "ok";
  let top: Lease | null = null;
  // Leases not looked at within the budget: the path may be inside any of them.
  let unchecked = 0;
  const pathIsGlob = isGlob(path);
  for (const lease of leases) {
    if (lease.agent === ctx.agent || !isLeaseLiveFor(lease, ctx.now, ctx.agent, ctx.takeoverGraceMs)) continue;
    const v = withinBudget(() => relation(lease, path, pathIsGlob, ctx.budget));
    if (v === SPENT) {
      unchecked++;
      continue;
    }
    if (!v) continue;
    const until = graceUntil(lease, ctx.now, ctx.agent, ctx.takeoverGraceMs);
    holders.push({
      agent: lease.agent,
      task: lease.task,
      pattern: lease.pattern,
      exclusive: lease.exclusive,
      expires_at: lease.expires_at,
      reason: lease.reason,
      worktree: lease.worktree,
      branch: lease.branch,
      verdict: v,
      ...(until ? { grace_until: until } : {}),
    });
    if (worst(raw, v) !== raw || top === null) {
      raw = worst(raw, v);
      top = lease;
    }
  }
  // A lease set that may be stale, or leases not looked at: never "free"; a deny found stands.
  const unsure = ctx.stale ?? (unchecked ? `the lease set has ${unchecked} lease(s) of other agents this check did not look at: ${BUDGET_NOTE}` : undefined);
  if (unsure && worst(raw, "warn") === "warn") {
    const verdict = applyMode(ctx.policy.mode, "warn");
    return { path, verdict, ignored: false, holders, message: `${verdict}: ${path} may be leased by another agent: ${unsure}`, suggestions: [] };
  }
  const verdict = applyMode(ctx.policy.mode, raw);
  if (!top) return { path, verdict, ignored: false, holders, message: `${path}: ok`, suggestions: [] };
  return { path, verdict, ignored: false, holders, message: describe(path, verdict, top, ctx), suggestions: holderSuggestions(top, ctx.now, ctx.takeoverGraceMs) };
}

export function checkPaths(paths: string[], leases: Lease[], ctx: CheckContext): { verdict: Verdict; answers: PathAnswer[] } {
  // One budget for every path of the check: a hook answers within it whatever the lease set holds.
  const within = ctx.budget ? ctx : { ...ctx, budget: newMatchBudget() };
  const answers = paths.map((p) => checkPath(p, leases, within));
  return { verdict: answers.reduce<Verdict>((v, a) => worst(v, a.verdict), "ok"), answers };
}

function describe(path: string, verdict: Verdict, l: Lease, ctx: CheckContext): string {
  const left = expiryOf(l) - ctx.now.getTime();
  const who = `${l.agent}${l.task ? ` (task ${l.task})` : ""}`;
  // Expired here but inside the grace: its holder's clock may be behind this one, so it still stands.
  const until =
    left > 0
      ? `until ${l.expires_at} (in ${formatDuration(left)})`
      : `until ${graceUntil(l, ctx.now, ctx.agent, ctx.takeoverGraceMs)} (${formatUntil(left + (ctx.takeoverGraceMs ?? 0))}): it expired ${formatDuration(-left)} ago by this clock, and stands for the takeover grace (clock skew)`;
  const what = l.exclusive
    ? `inside an exclusive lease on ${l.pattern} held by ${who} ${until}`
    : l.pattern === path
      ? `leased by ${who} ${until}`
      : `inside ${l.pattern}, leased by ${who} ${until}`;
  const why = l.reason ? `; reason: ${l.reason}` : "";
  return `${verdict}: ${path} is ${what}${why}`;
}

/** One text an agent can act on: the worst answers first, with what to do. */
export function answerText(answers: PathAnswer[]): string {
  const shown = answers.filter((a) => a.verdict !== "ok").sort((a, b) => rank(b.verdict) - rank(a.verdict));
  const lines: string[] = [];
  for (const a of shown) {
    lines.push(`git-handoff ${a.message}`);
    for (const s of a.suggestions) lines.push(`  ${s.action}: ${s.detail}`);
  }
  return lines.join("\n");
}

function rank(v: Verdict): number {
  return { ok: 0, info: 1, warn: 2, deny: 3 }[v];
}
