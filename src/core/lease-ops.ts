// File leases as a pure state machine over the lease set: acquire (shared or exclusive), release,
// lazy expiry and renewal by activity. State + intent + time -> steps or a refusal naming holders.
import type { Refusal, Suggestion } from "./errors.ts";
import type { HandoffEvent } from "./event.ts";
import { formatDuration, formatUntil } from "./duration.ts";
import { overlapWitness } from "./glob-overlap.ts";
import { GRANT_MATCH_BUDGET, newMatchBudget, SPENT, withinBudget, type MatchBudget } from "./match-budget.ts";
import { isLeaseLive, isLeaseLiveFor, MAX_LEASE_PATTERNS, MAX_REASON, type Lease, type LeaseSet } from "./lease.ts";
import { refuse, type Outcome, type Step } from "./outcome.ts";
import type { OpContext } from "./task-ops.ts";
import { handoffCommand } from "./shell-quote.ts";
import { earliestExpiry, leasesNear, leasesOfAgent, leasesOfTask } from "./lease-groups.ts";
import { keepOrder, withLeases } from "./lease-order.ts";
import { groupDigits } from "./digits.ts";
import { clipped, namedFew } from "./named-few.ts";

function base(type: HandoffEvent["type"], ctx: OpContext, task: string | null): HandoffEvent {
  const { agent, scope, worktree, branch } = ctx.actor;
  return { type, task: task ?? "", agent, at: ctx.now.toISOString(), scope, worktree, branch };
}

/** Lazy expiry: expired leases are dropped, one `lease_expired` step per holder, by the next writer. */
export function settleLeases(set: LeaseSet, ctx: OpContext): { record: LeaseSet; steps: Step<LeaseSet>[] } {
  // Nothing has expired before the earliest expiry (a lease live by this clock is live for anyone).
  if (earliestExpiry(set.leases) > ctx.now.getTime()) return { record: set, steps: [] };
  // Another agent's lease inside the takeover grace is not swept yet: its clock may be behind ours.
  const expired = set.leases.filter((l) => !isLeaseLiveFor(l, ctx.now, ctx.actor.agent, ctx.takeoverGraceMs));
  if (!expired.length) return { record: set, steps: [] };
  let leases = set.leases;
  const steps: Step<LeaseSet>[] = [];
  const holders = [...new Set(expired.map((l) => l.agent))].sort();
  for (const agent of holders) {
    const mine = expired.filter((l) => l.agent === agent);
    leases = leases.filter((l) => !mine.includes(l));
    const first = mine[0]!;
    const event: HandoffEvent = {
      type: "lease_expired",
      task: first.task ?? "",
      agent,
      at: ctx.now.toISOString(),
      scope: first.scope,
      worktree: first.worktree,
      branch: first.branch,
      by: ctx.actor.agent,
      paths: mine.map((l) => l.pattern),
      expires_at: first.expires_at,
    };
    steps.push({ event, record: { leases } });
  }
  return { record: { leases: keepOrder(set.leases, leases) }, steps };
}

function afterSettle(set: LeaseSet, ctx: OpContext, decide: (s: LeaseSet) => Outcome<LeaseSet>): Outcome<LeaseSet> {
  const settled = settleLeases(set, ctx);
  const out = decide(settled.record);
  if (!out.ok) return out;
  return { ok: true, record: out.record, steps: [...settled.steps, ...out.steps] };
}

export interface LeaseRequest {
  patterns: string[];
  exclusive: boolean;
  task: string | null;
  ttlMs: number;
  reason: string | null;
  auto?: boolean;
  /** Leases for a task the caller holds expire with its claim (task-leases.ts): its expiry and TTL. */
  until?: { expiresAt: string; ttlMs: number };
}

/** Another agent's live lease that stands in the way of `pattern`, with the file proving overlap. */
export interface Conflict {
  lease: Lease;
  requested: string;
  witness: string;
}

/** What a search for conflicts found, and what it could not compare within its budget. */
export interface ConflictSearch {
  conflicts: Conflict[];
  /** Live leases of others in the way if they overlap, not compared: the budget ran out first. */
  unchecked: { lease: Lease; requested: string }[];
}

/**
 * Who stands in the way of `agent` taking `patterns` (exclusive or not). Through a remote another
 * agent's lease stands for `graceMs` past its expiry (max_clock_skew plus this clock's offset).
 * `work`: the caller's budget of matching (match-budget.ts); the leases it leaves are `unchecked`.
 */
export function findConflicts(leases: Lease[], agent: string, patterns: string[], exclusive: boolean, now: Date, graceMs = 0, work?: MatchBudget): ConflictSearch {
  const out: ConflictSearch = { conflicts: [], unchecked: [] };
  for (const requested of patterns) {
    for (const lease of leasesNear(leases, requested)) {
      if (lease.agent === agent || !isLeaseLiveFor(lease, now, agent, graceMs)) continue;
      if (!exclusive && !lease.exclusive) continue;
      const witness = withinBudget(() => overlapWitness(requested, lease.pattern, work));
      if (witness === SPENT) {
        out.unchecked.push({ lease, requested });
        continue;
      }
      if (witness !== null) out.conflicts.push({ lease, requested, witness });
    }
  }
  return out;
}

/** The most leases a too_costly refusal names; the count says how many more. */
const NAMED_UNCHECKED = 5;

/**
 * A grant that could not compare its patterns with every live lease in its way within the budget:
 * it cannot prove them free, so it is refused, naming the budget and the leases left.
 */
export function uncheckedRefusal(unchecked: ConflictSearch["unchecked"]): Refusal {
  const named = namedFew(unchecked.map((u) => `${u.lease.agent}'s ${JSON.stringify(clipped(u.lease.pattern))}`), NAMED_UNCHECKED);
  return {
    code: "too_costly",
    message: `could not compare ${unchecked.length} live lease(s) of other agents with ${JSON.stringify(clipped(unchecked[0]!.requested))} within the budget of glob matching a grant may do (${groupDigits(GRANT_MATCH_BUDGET)} units), so it cannot prove the lease free: ${named}`,
    data: {
      budget: GRANT_MATCH_BUDGET,
      unchecked: unchecked.slice(0, NAMED_UNCHECKED).map((u) => ({ agent: u.lease.agent, pattern: clipped(u.lease.pattern), task: u.lease.task, requested: u.requested })),
      unchecked_count: unchecked.length,
    },
    suggestions: [
      { action: "negotiate", detail: `ask the holders to release or narrow those leases: ${handoffCommand("leases", "--agent", unchecked[0]!.lease.agent)}` },
      { action: "work_elsewhere", detail: "lease narrower paths or globs (a file or a folder costs little to compare)" },
    ],
  };
}

/**
 * How to reach the holder of a lease: what it is doing and where. A lease expired by this clock
 * but inside the takeover grace (`graceMs`) is waited for until the grace ends, not its expiry.
 */
export function holderSuggestions(l: Lease, now: Date, graceMs = 0): Suggestion[] {
  const left = Date.parse(l.expires_at) - now.getTime();
  const where = l.worktree ? ` in ${l.worktree}${l.branch ? ` (${l.branch})` : ""}` : "";
  // The grace's end is worked out only when said: a process's first toISOString loads the time
  // zone (~0.2 ms), and a hook's deny or warn answer comes here before it is written.
  const wait =
    left > 0 || graceMs <= 0
      ? `wait until ${l.agent} releases it or the lease expires at ${l.expires_at} (${formatUntil(left)})`
      : `wait until ${l.agent} releases it or the takeover grace past its expiry ends at ${new Date(Date.parse(l.expires_at) + graceMs).toISOString()} (${formatUntil(left + graceMs)})`;
  return [
    { action: "wait", detail: wait },
    {
      action: "negotiate",
      detail: l.task
        ? `ask ${l.agent}${where}, working on task ${l.task} (${handoffCommand("task", "show", l.task)}), to hand it over: ${handoffCommand("ask", l.agent, "--release", l.task)}`
        : `ask ${l.agent}${where} to release it: ${handoffCommand("ask", l.agent, "--release", l.pattern)}`,
    },
    { action: "work_elsewhere", detail: "work on another file or task; see who holds what: git handoff leases" },
  ];
}

export function conflictRefusal(c: Conflict, now: Date, graceMs = 0): Refusal {
  const l = c.lease;
  const left = Date.parse(l.expires_at) - now.getTime();
  const kind = l.exclusive ? "an exclusive" : "a shared";
  if (left <= 0) {
    // Expired by its holder's clock, but inside the takeover grace: the holder's clock may be behind.
    const wait = Math.max(0, graceMs + left);
    return {
      code: "held_by_other",
      message: `${c.requested} overlaps ${kind} lease on ${l.pattern} held by ${l.agent}${l.task ? ` for task ${l.task}` : ""}: it expired at ${l.expires_at}, ${formatDuration(-left)} ago, but a takeover waits ${formatDuration(graceMs)} past the expiry for clock skew (max_clock_skew plus this clock's offset), ${formatDuration(wait)} more`,
      data: { path: c.requested, pattern: l.pattern, holder: l.agent, task: l.task, exclusive: l.exclusive, expires_at: l.expires_at, witness: c.witness, takeover_grace_ms: graceMs },
      suggestions: [
        { action: "wait", detail: `wait ${formatDuration(wait)}, then lease it` },
        { action: "work_elsewhere", detail: "work on another file or task; see who holds what: git handoff leases" },
      ],
    };
  }
  return {
    code: "held_by_other",
    message: `${c.requested} overlaps ${kind} lease on ${l.pattern} held by ${l.agent}${l.task ? ` for task ${l.task}` : ""} until ${l.expires_at} (${formatUntil(left)})`,
    data: { path: c.requested, pattern: l.pattern, holder: l.agent, task: l.task, exclusive: l.exclusive, expires_at: l.expires_at, witness: c.witness },
    suggestions: holderSuggestions(l, now),
  };
}

function checkRequest(req: LeaseRequest): Refusal | null {
  if (req.patterns.length === 0) return { code: "invalid_input", message: "name at least one path or glob to lease" };
  if (req.patterns.length > MAX_LEASE_PATTERNS) return { code: "invalid_input", message: `at most ${MAX_LEASE_PATTERNS} paths per lease` };
  if (req.reason && req.reason.length > MAX_REASON) return { code: "invalid_input", message: `reason is ${req.reason.length} characters; at most ${MAX_REASON}` };
  return null;
}

/**
 * Extends every free-standing lease of `agent` from now: any activity of a holder renews them. A
 * lease taken for a task lives as long as the task's claim instead (task-leases.ts).
 */
function renewAll(leases: Lease[], agent: string, now: Date): Lease[] {
  return leases.map((l) => (l.agent === agent && l.task === null ? { ...l, expires_at: new Date(now.getTime() + l.ttl_ms).toISOString() } : l));
}

/**
 * Grants `req` to the caller, or refuses naming the first holder in the way. An exclusive request
 * conflicts with any overlapping lease of another agent; a shared one only with exclusive ones.
 * Leasing a pattern you already hold updates it (renews, changes exclusive, task or reason).
 */
export function acquireLeases(set: LeaseSet, req: LeaseRequest, ctx: OpContext): Outcome<LeaseSet> {
  const bad = checkRequest(req);
  if (bad) return refuse(bad);
  return afterSettle(set, ctx, (s) => {
    const agent = ctx.actor.agent;
    // Bounded by a budget of matching: a lease set of costly globs makes the grant refuse, not run for minutes.
    const { conflicts, unchecked } = findConflicts(s.leases, agent, req.patterns, req.exclusive, ctx.now, ctx.takeoverGraceMs, newMatchBudget(GRANT_MATCH_BUDGET));
    if (conflicts.length) return refuse(conflictRefusal(conflicts[0]!, ctx.now, ctx.takeoverGraceMs));
    if (unchecked.length) return refuse(uncheckedRefusal(unchecked));
    const expires = req.until?.expiresAt ?? new Date(ctx.now.getTime() + req.ttlMs).toISOString();
    const ttlMs = req.until?.ttlMs ?? req.ttlMs;
    const { worktree, branch, scope } = ctx.actor;
    const patterns = [...new Set(req.patterns)];
    // Only the caller's own leases change (renewed, or replaced by these patterns): looked up, not
    // walked for, in a set of 1,000 (lease-groups.ts).
    const own = leasesOfAgent(s.leases, agent);
    // The caller's other free-standing leases are renewed together once one is a third through its
    // time, as its pre-edit hooks renew them (renewLeases): renewed at every write, an agent that
    // had leased 900 files rewrote all 900 of them with each new one.
    const renewed = own.some((l) => l.task === null && renewalDue(l, ctx.now)) ? keepOrder(s.leases, renewAll(s.leases, agent, ctx.now)) : s.leases;
    const kept = own.some((l) => patterns.includes(l.pattern)) ? keepOrder(renewed, renewed.filter((l) => !(l.agent === agent && patterns.includes(l.pattern)))) : renewed;
    const added: Lease[] = [];
    for (const pattern of patterns) {
      const before = own.find((l) => l.pattern === pattern);
      // Leased again without naming a task, a lease that serves one keeps serving it, so it keeps
      // its expiry too: a task's leases live exactly as long as its claim (task-leases.ts). Given
      // this request's TTL instead, a claim's scope lease ran out minutes before the claim (others
      // then took the holder's files) or outlived it (turning others away from an abandoned task).
      const follows = req.task === null && !req.until && before !== undefined && before.task !== null;
      added.push({
        pattern,
        agent,
        task: req.task ?? before?.task ?? null,
        exclusive: req.exclusive,
        acquired_at: before?.acquired_at ?? ctx.now.toISOString(),
        expires_at: follows ? before.expires_at : expires,
        ttl_ms: follows ? before.ttl_ms : ttlMs,
        reason: req.reason ?? before?.reason ?? null,
        ...(req.auto ? { auto: true } : {}),
        worktree,
        branch,
        scope,
      });
    }
    const record = { leases: withLeases(kept, added) };
    // The event says when the leases end: a task's lease leased again keeps its claim's expiry, not this request's.
    const ends = [...new Set(added.map((l) => l.expires_at))];
    const event: HandoffEvent = { ...base("leased", ctx, req.task), paths: patterns, exclusive: req.exclusive, expires_at: ends.length === 1 ? ends[0]! : expires };
    if (req.reason) event.reason = req.reason;
    return { ok: true, record, steps: [{ event, record }] };
  });
}

export interface ReleaseRequest {
  /** Exact patterns to release, as leased. */
  patterns?: string[];
  /** Release every lease of the caller. */
  all?: boolean;
}

/** Releases the caller's own leases; a pattern the caller does not hold is refused, naming who does. */
export function releaseLeases(set: LeaseSet, req: ReleaseRequest, ctx: OpContext): Outcome<LeaseSet> {
  return afterSettle(set, ctx, (s) => {
    const agent = ctx.actor.agent;
    const mine = s.leases.filter((l) => l.agent === agent);
    let gone: Lease[];
    if (req.all) gone = mine;
    else {
      const wanted = [...new Set(req.patterns ?? [])];
      if (!wanted.length) return refuse({ code: "invalid_input", message: "name the paths or globs to unlease, or --all" });
      const missing = wanted.filter((p) => !mine.some((l) => l.pattern === p));
      if (missing.length) {
        const others = s.leases.filter((l) => missing.includes(l.pattern)).map((l) => l.agent);
        return refuse({
          code: others.length ? "not_holder" : "not_found",
          message: `${agent} holds no lease on ${missing.join(", ")}${others.length ? ` (held by ${[...new Set(others)].join(", ")})` : ""}`,
          data: { paths: missing },
          suggestions: [{ action: "fix_input", detail: `see your leases: ${handoffCommand("leases", "--agent", agent)}` }],
        });
      }
      gone = mine.filter((l) => wanted.includes(l.pattern));
    }
    if (!gone.length) return { ok: true, record: s, steps: [] };
    const record = { leases: keepOrder(s.leases, s.leases.filter((l) => !gone.includes(l))) };
    const tasks = [...new Set(gone.map((l) => l.task).filter((t): t is string => !!t))];
    const event: HandoffEvent = { ...base("unleased", ctx, tasks.length === 1 ? tasks[0]! : null), paths: gone.map((l) => l.pattern) };
    return { ok: true, record, steps: [{ event, record }] };
  });
}

/**
 * Drops every lease serving `task` (whoever holds it): the task was released, finished or taken
 * over. `event` is the task event's agent context, so the log says who ended them.
 */
export function releaseTaskLeases(set: LeaseSet, task: string, ctx: OpContext, keepAgent?: string): Outcome<LeaseSet> {
  return afterSettle(set, ctx, (s) => {
    const gone = leasesOfTask(s.leases, task).filter((l) => l.agent !== keepAgent);
    if (!gone.length) return { ok: true, record: s, steps: [] };
    const record = { leases: keepOrder(s.leases, s.leases.filter((l) => !gone.includes(l))) };
    const event: HandoffEvent = { ...base("unleased", ctx, task), paths: gone.map((l) => l.pattern) };
    const holders = [...new Set(gone.map((l) => l.agent))];
    if (holders.length === 1 && holders[0] !== ctx.actor.agent) event.holder = holders[0]!;
    return { ok: true, record, steps: [{ event, record }] };
  });
}

/** Whether a live lease is past the point where its holder's activity renews it (a third through its time). */
function renewalDue(l: Lease, now: Date, minAgeFraction = 1 / 3): boolean {
  return isLeaseLive(l, now) && Date.parse(l.expires_at) - now.getTime() < l.ttl_ms * (1 - minAgeFraction);
}

/** Renews the caller's live free-standing leases, all together, once one is `minAgeFraction` through its TTL; else no steps. */
export function renewLeases(set: LeaseSet, ctx: OpContext, minAgeFraction = 1 / 3): Outcome<LeaseSet> {
  const agent = ctx.actor.agent;
  const stale = set.leases.some((l) => l.agent === agent && l.task === null && renewalDue(l, ctx.now, minAgeFraction));
  if (!stale) return { ok: true, record: set, steps: [] };
  return afterSettle(set, ctx, (s) => {
    const record = { leases: keepOrder(s.leases, renewAll(s.leases, agent, ctx.now)) };
    const mine = record.leases.filter((l) => l.agent === agent && l.task === null);
    const event: HandoffEvent = { ...base("leased", ctx, null), paths: mine.map((l) => l.pattern), expires_at: mine[0]?.expires_at ?? ctx.now.toISOString() };
    return { ok: true, record, steps: [{ event, record }] };
  });
}

/** Runs lease operations one after the other, collecting their steps; the first refusal wins. */
export function chainLeaseOps(set: LeaseSet, ctx: OpContext, ops: ((s: LeaseSet, ctx: OpContext) => Outcome<LeaseSet>)[]): Outcome<LeaseSet> {
  let record = set;
  const steps = [];
  for (const op of ops) {
    const out = op(record, ctx);
    if (!out.ok) return out;
    record = out.record;
    steps.push(...out.steps);
  }
  return { ok: true, record, steps };
}
