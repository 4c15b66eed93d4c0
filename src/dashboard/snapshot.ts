// Everything the page shows, read through the store as `status` reads it, in one JSON document,
// each list cut to what its view shows (bound.ts). Built again only when a ref changes (watch.ts);
// merge previews are cached by commit pair, each agent's merge base and changed paths by commits.
import { viewerOf } from "../core/clock-skew.ts";
import { buildRoster, type Roster } from "../core/agent-roster.ts";
import { buildStatus, type StatusView } from "../core/overview.ts";
import { EventType, summarize, type HandoffEvent } from "../core/event.ts";
import type { LeaseFlag } from "../core/lease-flags.ts";
import type { Lease } from "../core/lease.ts";
import { diffLine } from "../core/diff-summary.ts";
import { computeStats, type Stats } from "../core/stats.ts";
import { shownTask } from "../core/task-view.ts";
import type { Task, TaskStatus } from "../core/task.ts";
import { displaySafe } from "../present/display-safe.ts";
import { markNewer } from "../present/newer-note.ts";
import { listAgents } from "../store/agent-store.ts";
import { predictConflicts, type MergeCache } from "../store/conflicts.ts";
import { saveMerges, storedMerges } from "../store/merge-cache-file.ts";
import { readEvents, type CommitEvents } from "../store/events.ts";
import { flaggedLeases } from "../store/lease-reclaim.ts";
import { viewContext } from "../store/check-context.ts";
import type { Store } from "../store/store.ts";
import { listTasks } from "../store/task-store.ts";
import { syncHealth, type SyncHealth } from "./sync-health.ts";
import type { DriftView } from "../core/declaration.ts";
import { computeDrift } from "../store/drift.ts";
import { viewTasksOf } from "../core/view-tasks.ts";
import { loadLeases } from "../store/lease-store.ts";
import { staleLeaseNote } from "../store/stale-leases.ts";
import { indexedLogEvents } from "../store/log-index.ts";
import { boundCards, boundGraph, boundLeases, boundRows, LIMITS, type GraphEdge } from "./bound.ts";

export interface TaskCard {
  id: string;
  objective: string;
  status: TaskStatus;
  priority: number;
  holder: string | null;
  expires_at: string | null;
  attempts: number;
  max_attempts: number;
  to: string | null;
  after: string[];
  handoffs: number;
  /** The claim can be reclaimed from the page: it expired, or its holder is stale or gone. */
  stale: boolean;
  /** The fence of the claim shown (null: not claimed): a reclaim from the page takes only that claim. */
  fence: number | null;
  /** Another agent's claim expired by this clock that stands for the takeover grace until then: held, a claim of it is refused. */
  grace_until?: string;
  /** The sync remote holds this task from a newer git-handoff (present/newer-note.ts): the card may be stale, and nothing can change it here. */
  newer_on_remote?: true;
}

/**
 * Lists are cut to what the page shows (bound.ts); `totals` says how long each is whole. The
 * status's counts, roster, placements and inbox are whole; its claims by holder are left out (the
 * page shows them in the matrix).
 */
export interface Snapshot {
  at: string;
  me: Store["actor"];
  read_only: boolean;
  status: Omit<StatusView, "review" | "holders" | "expiring_soon" | "expired"> & { review: (StatusView["review"][number] & { diff_line: string | null })[] };
  /** The board's cards: the first LIMITS.column of each state (`status.counts` has every state's number). */
  tasks: TaskCard[];
  /** The edges of the graph's part drawn; `graph` has the whole graph's size. */
  edges: GraphEdge[];
  graph: { nodes_total: number; edges_total: number; blocking_total: number };
  /** `grace_until`: another agent's lease expired by this clock that stands for the takeover grace until then. */
  leases: { lease: Lease; flag: LeaseFlag | null; grace_until?: string }[];
  /** Why the leases shown may be stale (the remote's lease set is from a newer git-handoff, store/stale-leases.ts), or null. */
  leases_newer: string | null;
  totals: { tasks: number; leases: number; blocked: number; review: number; stuck: number };
  limits: typeof LIMITS;
  events: (HandoffEvent & { summary: string })[];
  event_types: readonly string[];
  stats: Stats & { catches_by_day: { day: string; claim_refused: number; hook_caught: number; conflict_found: number }[] };
  sync: SyncHealth;
  /** Each agent's edits outside its declaration, and claims renewed while their branch stands still. */
  drift: DriftView;
  problems: string[];
  /** How long the server took to build this snapshot (set by the server). */
  build_ms?: number;
}

export interface SnapshotCache {
  merges: MergeCache;
  commits: CommitEvents;
  lastSync: SyncHealth["last_sync"];
  /** Merge bases and changed paths by commits, kept across rebuilds (Store.keepAnswersIn). */
  answers?: Map<string, unknown>;
  /**
   * Share merge previews with `status` through .git/handoff/merge-preview.json: read it before
   * the first build, write it when a build merged a new pair. Set by the server; false once read.
   */
  mergeFile?: boolean;
}

const RECENT_EVENTS = 200;
/** Parsed commits kept between rebuilds (a few hundred bytes each). */
const COMMIT_CACHE_LIMIT = 200_000;
const CATCHES = ["claim_refused", "hook_caught", "conflict_found"] as const;

export async function buildSnapshot(store: Store, cache: SnapshotCache, readOnly: boolean): Promise<Snapshot> {
  const now = store.now();
  if (cache.answers) store.keepAnswersIn(cache.answers);
  const [{ tasks, problems }, { agents, problems: agentProblems }] = await Promise.all([listTasks(store, { settled: false }), listAgents(store)]);
  const records = agents.map((a) => a.record);
  // As `status`: another agent's claim inside the takeover grace is held (the write context's grace, no network call).
  const ctx = await viewContext(store, now);
  const viewer = viewerOf(ctx);
  // The records read into columns once, for the roster, the status and drift (core/view-tasks.ts).
  const view = viewTasksOf(tasks);
  const roster = buildRoster(records, view, now, store.config, viewer);
  const predicted = await previewWithFile(store, roster, cache);
  const status = buildStatus({ tasks: view, agents: records, conflicts: predicted, config: store.config, now, roster, viewer });
  const statusOf = new Map(roster.agents.map((a) => [a.agent, a.status]));
  const settled = tasks.map((t) => shownTask(t, ctx));
  const byId = new Map(settled.map((t) => [t.id, t]));
  const storedById = new Map(tasks.map((t) => [t.id, t]));
  // Marked as `task list` marks them: the remote holds these from a newer git-handoff.
  const held = await store.heldAsNewer();
  const cards = markNewer(settled.map((t): TaskCard => {
    const stored = storedById.get(t.id)!;
    const claim = stored.status === "claimed" ? stored.claim : null;
    const expired = !!claim && Date.parse(claim.expires_at) <= now.getTime();
    const holderStatus = claim ? statusOf.get(claim.agent) : undefined;
    return {
      id: t.id,
      objective: t.objective,
      status: t.status,
      priority: t.priority,
      holder: claim?.agent ?? (t.status === "review" ? (t.review?.submitted_by ?? null) : null),
      expires_at: claim?.expires_at ?? null,
      attempts: t.attempts,
      max_attempts: t.max_attempts,
      to: addressOf(t),
      after: t.after ?? [],
      handoffs: t.handoffs?.length ?? 0,
      stale: !!claim && (expired || holderStatus === "stale" || holderStatus === "disconnected"),
      fence: claim?.fence ?? null,
      ...(t.grace_until ? { grace_until: t.grace_until } : {}),
    };
  }), held);
  const edges = settled.flatMap((t) =>
    (t.after ?? []).map((on): GraphEdge => {
      const dep = byId.get(on);
      return { task: t.id, on, status: dep?.status ?? "missing", task_status: t.status, blocked: !isFinished(t) && dep?.status !== "done" };
    }),
  );
  const { edges: drawn, ...graph } = boundGraph(edges);
  const leases = await flaggedLeases(store, {
    tasks: new Map(settled.map((t) => [t.id, t])),
    agents: new Map(roster.agents.map((a) => [a.agent, { status: a.status, ended_at: a.ended_at }])),
  });
  if (cache.commits.size > COMMIT_CACHE_LIMIT) cache.commits.clear();
  const history = await readEvents(store, {}, { onProblem: (m) => problems.push(m), commits: cache.commits });
  const stats = { ...computeStats(history, { since: null, now }), catches_by_day: catchesByDay(history) };
  const sync = await syncHealth(store, cache.lastSync);
  const { holders: _h, expiring_soon: _s, expired: _e, ...shownStatus } = status;
  const drift = await computeDrift(store, { agents: records, tasks: view, leases: (await loadLeases(store)).set.leases, logged: await indexedLogEvents(store) });
  return displaySafe({
    at: now.toISOString(),
    me: store.actor,
    read_only: readOnly,
    status: {
      ...shownStatus,
      matrix: { ...status.matrix, rows: boundRows(status.matrix.rows) },
      blocked: status.blocked.slice(0, LIMITS.rows),
      review: status.review.slice(0, LIMITS.review).map((r) => ({ ...r, diff_line: r.diff ? diffLine(r.diff) : null })),
    },
    tasks: boundCards(cards),
    edges: drawn,
    graph,
    leases: boundLeases(leases),
    leases_newer: (await staleLeaseNote(store)) ?? null,
    totals: { tasks: cards.length, leases: leases.length, blocked: status.blocked.length, review: status.review.length, stuck: drift.stuck.length },
    limits: LIMITS,
    events: history.slice(-RECENT_EVENTS).map((e) => ({ ...e, summary: summarize(e) })),
    event_types: EventType.options,
    stats,
    sync,
    drift: { ...drift, stuck: drift.stuck.slice(0, LIMITS.rows) },
    problems: [...problems, ...agentProblems],
  });
}

/**
 * The merge preview, sharing its results with `status` when the server asks (mergeFile): at 30
 * branches a first build merged 435 pairs (~20 s here) that a `status` before it had merged already.
 */
async function previewWithFile(store: Store, roster: Roster, cache: SnapshotCache) {
  if (cache.mergeFile) {
    for (const [key, r] of storedMerges(store)) if (!cache.merges.has(key)) cache.merges.set(key, r);
  }
  const known = cache.merges.size;
  const predicted = await predictConflicts(store, { roster, cache: cache.merges });
  if (cache.mergeFile !== undefined && cache.merges.size > known) {
    // The pairs of the current tips only, as status keeps them; a failed write is only a slower preview.
    const used = new Map(predicted.pairs.flatMap((p) => (p.a_commit && p.b_commit && !p.error ? [[`${p.a_commit}:${p.b_commit}`, { ok: true as const, conflicts: p.conflicts }]] : [])));
    try {
      saveMerges(store, used);
    } catch {
      /* read-only .git: merge again next time */
    }
  }
  cache.mergeFile &&= false;
  return predicted;
}

function isFinished(t: Task): boolean {
  return t.status === "done" || t.status === "cancelled" || t.status === "failed";
}

/** A task addressed to one agent (a `to` field written by the addressing feature), else null. */
function addressOf(t: Task): string | null {
  const to = (t as Task & { to?: unknown }).to;
  return typeof to === "string" ? to : null;
}

function catchesByDay(events: HandoffEvent[]): Snapshot["stats"]["catches_by_day"] {
  const days = new Map<string, { day: string; claim_refused: number; hook_caught: number; conflict_found: number }>();
  for (const e of events) {
    if (!(CATCHES as readonly string[]).includes(e.type)) continue;
    const day = e.at.slice(0, 10);
    const row = days.get(day) ?? { day, claim_refused: 0, hook_caught: 0, conflict_found: 0 };
    row[e.type as (typeof CATCHES)[number]]++;
    days.set(day, row);
  }
  return [...days.values()].sort((a, b) => a.day.localeCompare(b.day)).slice(-30);
}

/**
 * When a state stops being true by the clock alone, epoch ms: the first claim or lease expiry
 * still ahead when it was built (that claim shows as held until then), or `maxAgeMs` after it was
 * built (an agent's heartbeat going stale, "expires in" texts). No ref moves at either moment, so
 * nothing else would make the server look again.
 */
export function validUntil(s: Snapshot, maxAgeMs: number): number {
  const built = Date.parse(s.at);
  let until = built + maxAgeMs;
  const consider = (iso: string | null) => {
    const t = iso ? Date.parse(iso) : NaN;
    if (t > built && t < until) until = t;
  };
  // A claim inside the takeover grace stops being held when the grace ends.
  for (const t of s.tasks) consider(t.grace_until ?? t.expires_at);
  // A lease inside the takeover grace stops showing when the grace ends.
  for (const l of s.leases) consider(l.grace_until ?? l.lease.expires_at);
  return until;
}
