// Negotiation as data: an agent asks the holder of a task or a lease to release it; the holder
// answers release (given back in the same transaction) or keep (optionally until a time). Each
// side writes only its own log ref (refs/handoff/log/<agent>): the request on the requester's, the
// answer and each delivery on the holder's. The state of a request is folded from those events.
// Pure.
import type { AgentStatus } from "./agent.ts";
import { HandoffError, type Refusal } from "./errors.ts";
import { parseDuration } from "./duration.ts";
import type { HandoffEvent } from "./event.ts";
import { groupDigits } from "./digits.ts";
import { matchesPath } from "./glob-overlap.ts";
import { isLeaseLive, isLeaseLiveFor, MAX_REASON, type Lease } from "./lease.ts";
import { LOCAL_MATCH_BUDGET, newMatchBudget, SPENT, withinBudget } from "./match-budget.ts";
import { handoffCommand } from "./shell-quote.ts";
import { clipped, namedFew } from "./named-few.ts";
import type { Task } from "./task.ts";
import type { OpContext } from "./task-ops.ts";
import { textOrder } from "./text-order.ts";
import { optionLike } from "./option-like.ts";

export const REQUEST_ID_RE = /^rq-[0-9a-z]{8}$/;
const ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

export function newRequestId(random: Uint8Array): string {
  let out = "rq-";
  for (let i = 0; i < 8; i++) out += ID_ALPHABET[(random[i] ?? 0) & 31];
  return out;
}

export type Verdict = "release" | "keep";

export interface RequestAnswer {
  verdict: Verdict;
  at: string;
  until: string | null;
  reason: string | null;
}

export interface ReleaseRequest {
  id: string;
  from: string;
  to: string;
  at: string;
  /** What is asked for: a task (its claim and scope leases) or lease patterns. */
  task: string | null;
  paths: string[];
  reason: string | null;
  answer: RequestAnswer | null;
}

/**
 * Which deliveries an agent has had, as `<id>:<kind>/<channel>`: kind `request` (to the holder) or
 * `answer` (to the requester), channel `hook` (a pre-edit hook's answer) or `session` (SessionStart).
 */
export type Delivered = Set<string>;

/** Folds request, answer and delivery events (from every log) into requests and deliveries. */
export function foldRequests(events: HandoffEvent[]): { requests: ReleaseRequest[]; delivered: Map<string, Delivered> } {
  const byId = new Map<string, ReleaseRequest>();
  const delivered = new Map<string, Delivered>();
  const sorted = [...events].sort((a, b) => textOrder(a.at, b.at));
  for (const e of sorted) {
    if (!e.request) continue;
    if (e.type === "release_requested" && e.holder && !byId.has(e.request)) {
      byId.set(e.request, { id: e.request, from: e.agent, to: e.holder, at: e.at, task: e.task || null, paths: e.paths ?? [], reason: e.reason ?? null, answer: null });
    } else if (e.type === "release_answered") {
      const r = byId.get(e.request);
      // Only the agent asked may answer; a forged answer on someone else's log is not one.
      if (r && r.to === e.agent && !r.answer && (e.answer === "release" || e.answer === "keep")) {
        r.answer = { verdict: e.answer, at: e.at, until: e.until ?? null, reason: e.reason ?? null };
      }
    } else if (e.type === "request_delivered" && e.note) {
      const set = delivered.get(e.agent) ?? new Set<string>();
      set.add(`${e.request}:${e.note}`);
      delivered.set(e.agent, set);
    }
  }
  return { requests: [...byId.values()], delivered };
}

/** What `agent` has not been told yet in `channel`: requests to it still open, answers to its requests. */
export function undelivered(agent: string, requests: ReleaseRequest[], delivered: Delivered | undefined, channel: string): { requests: ReleaseRequest[]; answers: ReleaseRequest[] } {
  const seen = delivered ?? new Set<string>();
  return {
    requests: requests.filter((r) => r.to === agent && !r.answer && !seen.has(`${r.id}:request/${channel}`)),
    answers: requests.filter((r) => r.from === agent && r.answer && !seen.has(`${r.id}:answer/${channel}`)),
  };
}

export interface AskInput {
  to: string;
  target: string;
  reason: string | null;
}

export interface AskFacts {
  /** The holder's status, or null when no such agent is known. */
  status: AgentStatus | null;
  tasks: Task[];
  leases: Lease[];
}


/** The holder's leases not compared with the target within the budget: how many, the first few named, and what that means. */
export interface NotCompared {
  count: number;
  patterns: string[];
  note: string;
}

/** The most patterns a note or refusal names; the count says how many more. */
const NAMED = 5;
const short = (p: string) => JSON.stringify(clipped(p));

/**
 * The holder's live leases that name `target`: its own pattern first (free to compare), then the
 * globs matching it, within a check's budget of matching (match-budget.ts): a lease set synced
 * from another clone may hold a thousand costly globs, which took an ask 16 s. Those left are
 * returned, never guessed at: asking to release a lease that may not cover the path would be wrong.
 */
function leasesNaming(live: Lease[], target: string): { paths: string[]; unchecked: string[] } {
  const work = newMatchBudget(LOCAL_MATCH_BUDGET);
  const paths = new Set(live.filter((l) => l.pattern === target).map((l) => l.pattern));
  const unchecked = new Set<string>();
  for (const l of live) {
    if (paths.has(l.pattern) || unchecked.has(l.pattern)) continue;
    const hit = withinBudget(() => matchesPath(l.pattern, target, work));
    if (hit === SPENT) unchecked.add(l.pattern);
    else if (hit) paths.add(l.pattern);
  }
  return { paths: [...paths], unchecked: [...unchecked] };
}

function notCompared(to: string, target: string, unchecked: string[]): NotCompared {
  return {
    count: unchecked.length,
    patterns: unchecked.slice(0, NAMED),
    note: `${unchecked.length} of ${to}'s leases were not compared with ${short(target)}: their globs took more than the budget of matching one check may do (${groupDigits(LOCAL_MATCH_BUDGET)} units), so they are not asked for: ${namedFew(unchecked.map(short), NAMED)}`,
  };
}

/**
 * The release_requested event, or why not: self, unknown agent, gone agent, nothing held, or
 * (too_costly) nothing found while some of the holder's leases could not be compared. With
 * `not_compared`, the event asks for what was found and names what was left.
 */
export function askRelease(input: AskInput, facts: AskFacts, id: string, ctx: OpContext): { ok: true; event: HandoffEvent; not_compared?: NotCompared } | { ok: false; refusal: Refusal } {
  const me = ctx.actor.agent;
  const bad = (message: string): { ok: false; refusal: Refusal } => ({ ok: false, refusal: { code: "invalid_input", message } });
  if (!input.target || optionLike(input.target)) return bad(`--release needs a task id or a path, got ${JSON.stringify(input.target)}`);
  if (input.target.length > 1024 || /[\x00-\x1f]/.test(input.target)) return bad("--release must be one line of at most 1024 characters");
  if (input.reason !== null && (input.reason.length > MAX_REASON || optionLike(input.reason))) return bad(`--reason must be text of at most ${MAX_REASON} characters that does not start with '-'`);
  if (input.to === me) return bad("you cannot ask yourself: release it with git handoff release or git handoff unlease");
  const task = facts.tasks.find((t) => t.id === input.target);
  // Its leases as a write counts them: one inside the takeover grace (expired by this clock, live
  // perhaps by its holder's) still refuses a lease of its path, so asking for it is no mistake.
  // `facts.tasks` are settled by the same grace (store/release-requests.ts).
  const live = facts.leases.filter((l) => l.agent === input.to && isLeaseLiveFor(l, ctx.now, me, ctx.takeoverGraceMs));
  const { paths, unchecked } = task ? { paths: [], unchecked: [] } : leasesNaming(live, input.target);
  const heldTask = task && task.status === "claimed" && task.claim?.agent === input.to;
  // An agent that only ran CLI verbs (no session, no heartbeat) has no record, yet its live claim
  // and leases are its own: it is asked like any other; only an agent known for nothing is unknown.
  // An agent may have worked here without a session (CLI verbs only): what is sure is that it
  // holds nothing of that name and has no session; the name may also be a typo.
  if (facts.status === null && !heldTask && !live.length) {
    return {
      ok: false,
      refusal: {
        code: "not_found",
        message: `${input.to} holds no task or lease ${input.target}, and has no session here`,
        data: { agent: input.to, target: input.target },
        suggestions: [{ action: "fix_input", detail: `see who holds what: ${handoffCommand("status")}; the agents with a session: ${handoffCommand("agents")}` }],
      },
    };
  }
  if (facts.status === "disconnected") {
    const how = task ? handoffCommand("reclaim", task.id, "--reason", "holder is gone") : handoffCommand("unlease", input.target, "--reclaim", "--holder", input.to, "--reason", "holder is gone");
    return {
      ok: false,
      refusal: {
        code: "holder_gone",
        message: `${input.to} is gone (its session ended or went silent): nobody would answer; take it back instead`,
        data: { agent: input.to, target: input.target },
        suggestions: [{ action: "reclaim", detail: `force-release it (logged): ${how}` }],
      },
    };
  }
  if (!heldTask && !paths.length && unchecked.length) {
    const left = notCompared(input.to, input.target, unchecked);
    return {
      ok: false,
      refusal: {
        code: "too_costly",
        message: `could not compare ${left.count} of ${input.to}'s live leases with ${short(input.target)} within the budget of glob matching one check may do (${groupDigits(LOCAL_MATCH_BUDGET)} units), so it cannot tell which of them hold it: ${namedFew(unchecked.map(short), NAMED)}`,
        data: { agent: input.to, target: input.target, budget: LOCAL_MATCH_BUDGET, unchecked: left.patterns, unchecked_count: left.count },
        suggestions: [{ action: "fix_input", detail: `ask for one of its leases by its pattern (compared as text): ${handoffCommand("leases", "--agent", input.to)}, then ${handoffCommand("ask", input.to, "--release", "<pattern>")}` }],
      },
    };
  }
  if (!heldTask && !paths.length) {
    return {
      ok: false,
      refusal: {
        code: "not_found",
        message: `${input.to} holds no task or lease ${input.target}`,
        data: { agent: input.to, target: input.target },
        suggestions: [{ action: "fix_input", detail: `see what it holds: ${handoffCommand("leases", "--agent", input.to)}` }],
      },
    };
  }
  const { scope, worktree, branch } = ctx.actor;
  const event: HandoffEvent = {
    type: "release_requested",
    task: heldTask ? task.id : "",
    agent: me,
    at: ctx.now.toISOString(),
    scope,
    worktree,
    branch,
    holder: input.to,
    request: id,
    ...(paths.length ? { paths } : {}),
    ...(input.reason ? { reason: input.reason } : {}),
  };
  return { ok: true, event, ...(unchecked.length ? { not_compared: notCompared(input.to, input.target, unchecked) } : {}) };
}

export interface AnswerInput {
  id: string;
  verdict: Verdict;
  until: string | null;
  reason: string | null;
}

/** The release_answered event, or why not: unknown request, someone else's, already answered. */
export function answerRequest(r: ReleaseRequest | undefined, input: AnswerInput, ctx: OpContext): { ok: true; event: HandoffEvent } | { ok: false; refusal: Refusal } {
  const me = ctx.actor.agent;
  if (input.reason !== null && (input.reason.length > MAX_REASON || optionLike(input.reason))) {
    return { ok: false, refusal: { code: "invalid_input", message: `--reason must be text of at most ${MAX_REASON} characters that does not start with '-'` } };
  }
  // What the command line says wrong comes before what the state says: it is wrong for any request.
  if (input.until !== null && input.verdict !== "keep") return { ok: false, refusal: { code: "usage", message: "--until goes with --keep" } };
  if (!r) {
    return { ok: false, refusal: { code: "not_found", message: `no request ${input.id}`, data: { request: input.id }, suggestions: [{ action: "fix_input", detail: "see the requests waiting for you: git handoff inbox" }] } };
  }
  if (r.to !== me) {
    return { ok: false, refusal: { code: "not_holder", message: `request ${r.id} asks ${r.to}, not ${me}: only ${r.to} answers it`, data: { request: r.id, to: r.to } } };
  }
  if (r.answer) {
    return { ok: false, refusal: { code: "wrong_state", message: `request ${r.id} was already answered (${r.answer.verdict} at ${r.answer.at})`, data: { request: r.id, answer: r.answer } } };
  }
  const { scope, worktree, branch } = ctx.actor;
  const event: HandoffEvent = {
    type: "release_answered",
    task: r.task ?? "",
    agent: me,
    at: ctx.now.toISOString(),
    scope,
    worktree,
    branch,
    holder: r.from,
    request: r.id,
    answer: input.verdict,
    ...(r.paths.length ? { paths: r.paths } : {}),
    ...(input.until ? { until: input.until } : {}),
    ...(input.reason ? { reason: input.reason } : {}),
  };
  return { ok: true, event };
}

/** What the request asks for, in words: `task parser` or `src/api/**`. */
export function targetText(r: Pick<ReleaseRequest, "task" | "paths">): string {
  return r.task ? `task ${r.task}` : r.paths.join(" ");
}

/** `--until`: an ISO time, or a duration from now (`2h`). */
export function parseUntil(text: string, now: Date): string {
  if (text.startsWith("-")) throw new HandoffError({ code: "invalid_input", message: `--until needs a time or a duration, got ${JSON.stringify(text.slice(0, 80))}` });
  if (/^\d{4}-\d\d-\d\dT/.test(text)) {
    const t = Date.parse(text);
    if (Number.isNaN(t)) throw new HandoffError({ code: "invalid_input", message: `--until is not a time: ${JSON.stringify(text.slice(0, 80))}` });
    // "Kept until" a time already gone promises nothing: a typo (a wrong year, a day) more likely than meant.
    if (t <= now.getTime()) throw new HandoffError({ code: "invalid_input", message: `--until ${new Date(t).toISOString()} is already past (now ${now.toISOString()}): give a later time or a duration such as 2h` });
    return new Date(t).toISOString();
  }
  return new Date(now.getTime() + parseDuration(text, "--until")).toISOString();
}

/**
 * Whether the holder still holds what the request asks for; a request it no longer holds is moot
 * (not shown, not delivered). No takeover grace: it is asked for the holder's own inbox, and its
 * own claims and leases are judged by its own clock.
 */
export function stillHeld(r: ReleaseRequest, tasks: Task[], leases: Lease[], now: Date): boolean {
  if (r.task) return tasks.some((t) => t.id === r.task && t.status === "claimed" && t.claim?.agent === r.to && Date.parse(t.claim.expires_at) > now.getTime());
  return r.paths.some((p) => leases.some((l) => l.agent === r.to && l.pattern === p && isLeaseLive(l, now)));
}
