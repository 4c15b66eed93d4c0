// `stats`: what coordination caught and what it cost, computed from the event history alone.
// Pure: events (all of them, in time order) + the window start + now -> figures. The whole history
// is replayed so that state older than the window (a dependency done before it, a handoff made
// before it) is known; only what happens inside the window is counted.
import type { HandoffEvent } from "./event.ts";

export interface DurationFigures {
  count: number;
  median_ms: number | null;
  mean_ms: number | null;
  max_ms: number | null;
}

export interface Stats {
  since: string | null;
  until: string;
  /** Events inside the window. */
  events: number;
  claims: { granted: number; refused_duplicate: number; refused_blocked: number };
  /** Claims whose scope met other live work: `warn` same file or pattern, `info` other intersections. */
  overlaps: { warn: number; info: number };
  /** Refs from the sync remote refused by validation on receive (each refusal once, when first seen). */
  received: { refused: number };
  hooks: { deny: number; warn: number; info: number; by_hook: Record<string, { deny: number; warn: number; info: number }> };
  /** Distinct predicted conflicts (a pair of commits and its conflicting paths), and their paths. */
  conflicts: { predicted: number; paths: number };
  handoffs: { delivered: number; acknowledged: number; ack_rate: number | null; time_to_ack: DurationFigures };
  /** Tasks that waited on an unfinished dependency; `total_ms` sums finished waits only. */
  blocked: { tasks: number; unblocked: number; still_blocked: number; time_blocked: DurationFigures; total_ms: number; ongoing_ms: number };
  leases: { file_leases_expired: number; claims_expired: number; taken_over: number; reclaimed: number };
  review: { verified_passed: number; verified_failed: number; accepted: number; rejected: number };
}

export function durationFigures(values: number[]): DurationFigures {
  if (!values.length) return { count: 0, median_ms: null, mean_ms: null, max_ms: null };
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
  return { count: values.length, median_ms: median, mean_ms: Math.round(values.reduce((a, b) => a + b, 0) / values.length), max_ms: sorted.at(-1)! };
}

const time = (e: HandoffEvent) => Date.parse(e.at);

/** The types whose details `computeStats` reads; every other event is only counted. */
const READ_TYPES = new Set<HandoffEvent["type"]>([
  "created", "depended", "undepended", "done", "accepted", "cancelled", "hook_caught", "conflict_found", "handoff", "acked",
  "expired", "lease_expired", "claimed", "claim_refused", "claim_overlap", "received_invalid", "reclaimed", "submitted", "verified", "rejected",
  // drift and negotiation (negotiation-stats.ts)
  "undeclared_edit", "release_requested", "release_answered", "request_delivered",
]);

/**
 * `leased` events matter only as the other half of a lease taken over after its expiry (many,
 * and rarely needed): a cache keeps them apart as `partners` and counts them like the rest.
 */
export function isTakeoverPartner(e: HandoffEvent): boolean {
  return e.type === "leased";
}

/** Whether `events` hold an expiry whose take-over is looked for among the partners. */
export function needsPartners(events: HandoffEvent[]): boolean {
  return events.some((e) => e.type === "lease_expired" && e.by && e.by !== e.agent);
}
const READ_FIELDS = ["after", "on", "handoff", "paths", "commits", "verdict", "hook", "code", "passed", "by", "request", "holder", "reason", "answer", "until", "note"] as const;

/**
 * What `computeStats` needs of one event: the event cut to the fields it reads, or null when only
 * its time counts (a cache of the history can then keep a time instead of the whole event).
 */
export function statsProjection(e: HandoffEvent): HandoffEvent | null {
  if (!READ_TYPES.has(e.type) || (e.type === "created" && !e.after?.length)) return null;
  const out: Record<string, unknown> = { type: e.type, task: e.task, agent: e.agent, at: e.at };
  for (const f of READ_FIELDS) if (e[f] !== undefined) out[f] = e[f];
  return out as HandoffEvent;
}

const BLOCKING_TYPES = new Set<HandoffEvent["type"]>(["created", "depended", "undepended", "done", "accepted", "cancelled"]);

/** Blocked intervals per task, from created (--after), depended, undepended, done/accepted, cancelled. */
function blockedWaits(events: HandoffEvent[], sinceMs: number, nowMs: number) {
  const deps = new Map<string, Set<string>>();
  const finished = new Set<string>();
  const blockedSince = new Map<string, number>();
  const waits = new Map<string, number>();
  const touched = new Set<string>();
  const cancelled = new Set<string>();
  const isBlocked = (task: string) => !finished.has(task) && !cancelled.has(task) && [...(deps.get(task) ?? [])].some((d) => !finished.has(d));
  const update = (task: string, at: number) => {
    const blocked = isBlocked(task);
    const start = blockedSince.get(task);
    if (blocked && start === undefined) blockedSince.set(task, at);
    if (!blocked && start !== undefined) {
      blockedSince.delete(task);
      const from = Math.max(start, sinceMs);
      if (at >= sinceMs) {
        waits.set(task, (waits.get(task) ?? 0) + Math.max(0, at - from));
        touched.add(task);
      }
    }
  };
  for (const e of events) {
    if (!BLOCKING_TYPES.has(e.type)) continue;
    const at = time(e);
    if (e.type === "created" && e.after?.length) {
      deps.set(e.task, new Set(e.after));
      update(e.task, at);
    } else if (e.type === "depended" && e.on) {
      deps.set(e.task, new Set([...(deps.get(e.task) ?? []), e.on]));
      update(e.task, at);
    } else if (e.type === "undepended" && e.on) {
      deps.get(e.task)?.delete(e.on);
      update(e.task, at);
    } else if (e.type === "done" || e.type === "accepted" || e.type === "cancelled") {
      // A finished task stops waiting; a cancelled dependency never unblocks anyone.
      if (e.type === "cancelled") cancelled.add(e.task);
      else finished.add(e.task);
      for (const [task, on] of deps) if (on.has(e.task) || task === e.task) update(task, at);
    }
  }
  let ongoing = 0;
  for (const [task, start] of blockedSince) {
    ongoing += Math.max(0, nowMs - Math.max(start, sinceMs));
    touched.add(task);
  }
  return { waits: [...waits.values()], unblocked: waits.size, stillBlocked: blockedSince.size, tasks: touched.size, ongoing };
}

/**
 * The times of the events `stats` only counts (see statsProjection), as the event index keeps
 * them: lists of epoch milliseconds in base 36, comma-separated, each list checked by
 * `isCountedList` when it was read. Kept as text: parsing ~99,000 times into numbers (at 100,000
 * events) made the scan of the index take 40 ms instead of 5 in a one-shot `stats`. Without a
 * window only how many there are matters: `{ total }`, which the index's manifest keeps per ref,
 * so the lists (0.9 MB at 100,000 events) are not read at all.
 */
export type CountedTimes = readonly string[] | { readonly total: number };

// What parseInt(t, 36) reads whole, as the lists were checked before they were kept as text.
const COUNTED_LIST = /^-?[0-9a-zA-Z]+(?:,-?[0-9a-zA-Z]+)*$/;

/** Whether `list` is a list of base-36 times as the event index writes them. */
export function isCountedList(list: string): boolean {
  return COUNTED_LIST.test(list);
}

/** How many of the times in `counted` are at or after `sinceMs`. */
export function countedSince(counted: CountedTimes, sinceMs: number): number {
  if ("total" in counted) {
    // A count read for a view without a window cannot answer one: a caller's bug, never a guess.
    if (sinceMs !== -Infinity) throw new Error("countedSince: a window needs the counted times themselves, not their total");
    return counted.total;
  }
  let n = 0;
  for (const list of counted) {
    if (sinceMs === -Infinity) {
      n++;
      for (let at = list.indexOf(","); at >= 0; at = list.indexOf(",", at + 1)) n++;
      continue;
    }
    for (let start = 0; start < list.length; ) {
      let end = list.indexOf(",", start);
      if (end < 0) end = list.length;
      if (parseInt(list.slice(start, end), 36) >= sinceMs) n++;
      start = end + 1;
    }
  }
  return n;
}

/**
 * `counted`: the times of events left out of `all` because only their time counts (see
 * statsProjection); they add to `events` and nothing else. `partners`: `leased` events left out
 * of `all` and counted there, consulted only to match a lease taken over after its expiry.
 */
export function computeStats(all: HandoffEvent[], opts: { since: Date | null; now: Date; counted?: CountedTimes; partners?: HandoffEvent[] }): Stats {
  // ISO times of one format sort as strings; a plain comparison is much faster than localeCompare.
  // Events of one instant are put in task order (stable within a task, whose own events come in
  // their ref's order): the order they were read in depends on whether the event index was built
  // before or after them, and a scripted clock gives many events one instant.
  const events = [...all].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.task < b.task ? -1 : a.task > b.task ? 1 : 0));
  const sinceMs = opts.since?.getTime() ?? -Infinity;
  const inWindow = (e: HandoffEvent) => time(e) >= sinceMs;
  // Sorted by time, so the window is a suffix (found by one search, not a parse per event).
  let first = 0;
  for (let hi = events.length; first < hi; ) {
    const mid = (first + hi) >> 1;
    if (inWindow(events[mid]!)) hi = mid;
    else first = mid + 1;
  }
  const win = events.slice(first);
  const countedInWindow = countedSince(opts.counted ?? [], sinceMs);
  const byType = new Map<HandoffEvent["type"], HandoffEvent[]>();
  for (const e of win) (byType.get(e.type) ?? byType.set(e.type, []).get(e.type)!).push(e);
  const ofType = (type: HandoffEvent["type"]) => byType.get(type) ?? [];
  const count = (type: HandoffEvent["type"], pred: (e: HandoffEvent) => boolean = () => true) => ofType(type).filter(pred).length;

  const hooks: Stats["hooks"] = { deny: 0, warn: 0, info: 0, by_hook: {} };
  for (const e of ofType("hook_caught")) {
    if (!e.verdict) continue;
    hooks[e.verdict]++;
    const h = (hooks.by_hook[e.hook ?? "unknown"] ??= { deny: 0, warn: 0, info: 0 });
    h[e.verdict]++;
  }

  const conflictKeys = new Map<string, number>();
  for (const e of ofType("conflict_found")) {
    conflictKeys.set(`${[...(e.commits ?? [])].sort().join(",")}|${[...(e.paths ?? [])].sort().join(",")}`, (e.paths ?? []).length);
  }

  // Handoffs made inside the window; acknowledged = at least one ack (at any later time).
  const handoffAt = new Map<string, number>();
  const firstAck = new Map<string, number>();
  for (const e of events) {
    if (e.type !== "handoff" && e.type !== "acked") continue;
    if (e.type === "handoff" && e.handoff && inWindow(e)) handoffAt.set(e.handoff, time(e));
    if (e.type === "acked" && e.handoff && handoffAt.has(e.handoff) && !firstAck.has(e.handoff)) firstAck.set(e.handoff, time(e));
  }
  const ackTimes = [...firstAck].map(([id, at]) => Math.max(0, at - handoffAt.get(id)!));

  // A takeover: the agent that recorded an expiry takes the same thing in the same transaction.
  const expiries = [...ofType("expired"), ...ofType("lease_expired")].filter((e) => e.by && e.by !== e.agent);
  const atTime = new Map<string, HandoffEvent[]>();
  const partners = (opts.partners ?? []).filter(inWindow);
  if (expiries.length) for (const x of [...ofType("claimed"), ...ofType("leased"), ...partners]) (atTime.get(x.at) ?? atTime.set(x.at, []).get(x.at)!).push(x);
  const takenOver = expiries.filter((e) =>
    (atTime.get(e.at) ?? []).some((x) => x.agent === e.by && (e.type === "expired" ? x.type === "claimed" && x.task === e.task : x.type === "leased")),
  ).length;

  const blocked = blockedWaits(events, sinceMs, opts.now.getTime());
  const delivered = handoffAt.size;
  return {
    since: opts.since?.toISOString() ?? null,
    until: opts.now.toISOString(),
    events: win.length + countedInWindow,
    claims: {
      granted: count("claimed"),
      refused_duplicate: count("claim_refused", (e) => e.code === "held_by_other"),
      refused_blocked: count("claim_refused", (e) => e.code === "blocked"),
    },
    overlaps: { warn: count("claim_overlap", (e) => e.code === "warn"), info: count("claim_overlap", (e) => e.code === "info") },
    received: { refused: count("received_invalid") },
    hooks,
    conflicts: { predicted: conflictKeys.size, paths: [...conflictKeys.values()].reduce((a, b) => a + b, 0) },
    handoffs: { delivered, acknowledged: firstAck.size, ack_rate: delivered ? firstAck.size / delivered : null, time_to_ack: durationFigures(ackTimes) },
    blocked: {
      tasks: blocked.tasks,
      unblocked: blocked.unblocked,
      still_blocked: blocked.stillBlocked,
      time_blocked: durationFigures(blocked.waits),
      total_ms: blocked.waits.reduce((a, b) => a + b, 0),
      ongoing_ms: blocked.ongoing,
    },
    leases: { file_leases_expired: count("lease_expired"), claims_expired: count("expired"), taken_over: takenOver, reclaimed: count("reclaimed") },
    review: {
      // A passing verification is recorded as `submitted` (passed: true); a failing one as `verified`.
      verified_passed: count("submitted", (e) => e.passed !== false) + count("verified", (e) => e.passed === true),
      verified_failed: count("verified", (e) => e.passed === false),
      accepted: count("accepted"),
      rejected: count("rejected"),
    },
  };
}
