// Everything the page shows, read through the store as `status` reads it, in one JSON document.
// Built again only when a ref changes (watch.ts); merge previews are cached by commit pair.
import { buildRoster } from "../core/agent-roster.ts";
import { buildStatus, type StatusView } from "../core/overview.ts";
import { EventType, summarize, type HandoffEvent } from "../core/event.ts";
import type { LeaseFlag } from "../core/lease-flags.ts";
import type { Lease } from "../core/lease.ts";
import { diffLine } from "../core/diff-summary.ts";
import { computeStats, type Stats } from "../core/stats.ts";
import { settle } from "../core/task-ops.ts";
import type { Task, TaskStatus } from "../core/task.ts";
import { displaySafe } from "../present/display-safe.ts";
import { listAgents } from "../store/agent-store.ts";
import { predictConflicts, type MergeCache } from "../store/conflicts.ts";
import { readEvents, type CommitEvents } from "../store/events.ts";
import { flaggedLeases } from "../store/lease-reclaim.ts";
import type { Store } from "../store/store.ts";
import { listTasks } from "../store/task-store.ts";
import { syncHealth, type SyncHealth } from "./sync-health.ts";
import type { DriftView } from "../core/declaration.ts";
import { computeDrift } from "../store/drift.ts";
import { loadLeases } from "../store/lease-store.ts";
import { indexedLogEvents } from "../store/log-index.ts";

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
}

export interface Snapshot {
  at: string;
  me: Store["actor"];
  read_only: boolean;
  status: Omit<StatusView, "review"> & { review: (StatusView["review"][number] & { diff_line: string | null })[] };
  tasks: TaskCard[];
  edges: { task: string; on: string; blocked: boolean; status: string }[];
  leases: { lease: Lease; flag: LeaseFlag | null }[];
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
}

const RECENT_EVENTS = 200;
/** Parsed commits kept between rebuilds (a few hundred bytes each). */
const COMMIT_CACHE_LIMIT = 200_000;
const CATCHES = ["claim_refused", "hook_caught", "conflict_found"] as const;

export async function buildSnapshot(store: Store, cache: SnapshotCache, readOnly: boolean): Promise<Snapshot> {
  const now = store.now();
  const [{ tasks, problems }, { agents, problems: agentProblems }] = await Promise.all([listTasks(store, { settled: false }), listAgents(store)]);
  const records = agents.map((a) => a.record);
  const roster = buildRoster(records, tasks, now, store.config);
  const predicted = await predictConflicts(store, { roster, cache: cache.merges });
  const status = buildStatus({ tasks, agents: records, conflicts: predicted, config: store.config, now });
  const statusOf = new Map(roster.agents.map((a) => [a.agent, a.status]));
  const ctx = { now, actor: store.actor };
  const settled = tasks.map((t) => settle(t, ctx).record);
  const byId = new Map(settled.map((t) => [t.id, t]));
  const storedById = new Map(tasks.map((t) => [t.id, t]));
  const cards = settled.map((t): TaskCard => {
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
    };
  });
  const edges = settled.flatMap((t) =>
    (t.after ?? []).map((on) => {
      const dep = byId.get(on);
      return { task: t.id, on, status: dep?.status ?? "missing", blocked: !isFinished(t) && dep?.status !== "done" };
    }),
  );
  const leases = await flaggedLeases(store, {
    tasks: new Map(settled.map((t) => [t.id, t])),
    agents: new Map(roster.agents.map((a) => [a.agent, { status: a.status, ended_at: a.ended_at }])),
  });
  if (cache.commits.size > COMMIT_CACHE_LIMIT) cache.commits.clear();
  const history = await readEvents(store, {}, { onProblem: (m) => problems.push(m), commits: cache.commits });
  const stats = { ...computeStats(history, { since: null, now }), catches_by_day: catchesByDay(history) };
  const sync = await syncHealth(store, cache.lastSync);
  const drift = await computeDrift(store, { agents: records, tasks, leases: (await loadLeases(store)).set.leases, logged: await indexedLogEvents(store) });
  return displaySafe({
    at: now.toISOString(),
    me: store.actor,
    read_only: readOnly,
    status: { ...status, review: status.review.map((r) => ({ ...r, diff_line: r.diff ? diffLine(r.diff) : null })) },
    tasks: cards,
    edges,
    leases,
    events: history.slice(-RECENT_EVENTS).map((e) => ({ ...e, summary: summarize(e) })),
    event_types: EventType.options,
    stats,
    sync,
    drift,
    problems: [...problems, ...agentProblems],
  });
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
