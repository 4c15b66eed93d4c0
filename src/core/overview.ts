import { settle, type OpContext } from "./task-ops.ts";
import { claimGraceUntil, viewerContext, type Viewer } from "./clock-skew.ts";
import type { Actor } from "./identity.ts";
import type { TaskStatus } from "./task.ts";
import type { AgentRecord, AgentStatus } from "./agent.ts";
import { buildRoster, type Roster } from "./agent-roster.ts";
import type { Config } from "./config.ts";
import { conflictSummaryLine, type ConflictReport, type PairResult } from "./conflict.ts";
import { blockingEdges, type BlockedEdge } from "./dependency-graph.ts";
import { inboxFor } from "./handoff.ts";
import { reviewQueue, type ReviewItem } from "./review.ts";
import { textOrder } from "./text-order.ts";
import type { ViewTask } from "./view-task.ts";
import { asViewTasks, HANDS, WAITS, type ViewTasks } from "./view-tasks.ts";

export interface HeldTask {
  task: string;
  objective: string;
  agent: string;
  expires_at: string;
  expires_in_ms: number;
  fence: number;
  worktree: string | null;
  branch: string | null;
  scope: Actor["scope"];
  /** Another agent's claim expired by this clock that stands for the takeover grace until then (a claim of it is refused). */
  grace_until?: string;
}


export interface Overview {
  at: string;
  counts: Record<TaskStatus, number>;
  /** Live claims grouped by agent. */
  holders: { agent: string; tasks: HeldTask[] }[];
  /** Live claims ending within `soonMs`. */
  expiring_soon: HeldTask[];
  /** Claims whose lease ran out and that nobody has taken over yet (lazy expiry pending): free to claim. */
  expired: HeldTask[];
  /** A bounded text view's (buildOverview's `shown`): the lines of each list past the first, counted, not built. */
  hidden?: { held: number; expiring_soon: number; expired: number };
}

/**
 * The first bird's-eye view: tasks by state, who holds what, what expires soon. Another agent's
 * claim inside the viewer's takeover grace is held (with `grace_until`), not expired: a claim of
 * it is refused until then. `settledAlready`: each task's status settled by the caller. `shown`: a
 * bounded text shows the first this many lines of each list; only those are built, the rest counted
 * (`hidden`).
 */
export function buildOverview(stored: readonly ViewTask[] | ViewTasks, now: Date, soonMs = 5 * 60_000, counted: Partial<Record<TaskStatus, number>> = {}, settledAlready?: readonly TaskStatus[], viewer?: Viewer, shown?: number): Overview {
  const v = asViewTasks(stored);
  const counts: Record<TaskStatus, number> = { todo: 0, claimed: 0, done: 0, failed: 0, cancelled: 0, review: 0 };
  for (const [status, n] of Object.entries(counted) as [TaskStatus, number][]) if (status in counts) counts[status] += n;
  // Each claim by its place: a HeldTask (a record's fields) is built only for a line that shows it.
  const byAgent = new Map<string, number[]>();
  const expiring: number[] = [];
  const expired: number[] = [];
  const graced = new Map<number, string>();
  const ctx = viewerContext(now, viewer);
  const nowMs = now.getTime();
  // Times compared as they are, no difference made a task (each a new number in a cold process's
  // interpreter, 7,500 at 10,000 tasks); the columns in locals, each read once.
  const soonUntil = nowMs + soonMs;
  const { holder, status, expires } = v;
  for (let i = 0; i < v.length; i++) {
    counts[settledAlready ? settledAlready[i]! : settle(v.record(i), ctx).record.status]++;
    const agent = holder[i];
    if (agent === undefined || status[i] !== "claimed") continue;
    const at = expires[i]!;
    const graceUntil = at <= nowMs ? claimGraceUntil(v.record(i), ctx) : null;
    if (graceUntil) graced.set(i, graceUntil);
    else if (at <= nowMs) {
      expired.push(i);
      continue;
    }
    const mine = byAgent.get(agent);
    if (mine) mine.push(i);
    else byAgent.set(agent, [i]);
    // A claim inside the grace has expired already: its line says how long it stands.
    if (!graceUntil && at <= soonUntil) expiring.push(i);
  }
  const heldAt = (i: number): HeldTask => {
    const task = v.record(i);
    const claim = task.claim!;
    const held: HeldTask = {
      task: task.id,
      objective: task.objective,
      agent: claim.agent,
      expires_at: claim.expires_at,
      expires_in_ms: v.expires[i]! - nowMs,
      fence: claim.fence,
      worktree: claim.worktree,
      branch: claim.branch,
      scope: claim.scope,
    };
    const graceUntil = graced.get(i);
    if (graceUntil) held.grace_until = graceUntil;
    return held;
  };
  const upTo = shown ?? Infinity;
  let built = 0;
  let heldCount = 0;
  const holders = [...byAgent.entries()]
    .sort(([a], [b]) => textOrder(a, b))
    .map(([agent, places]) => {
      heldCount += places.length;
      const take = Math.max(0, Math.min(places.length, upTo - built));
      built += take;
      return { agent, tasks: places.slice(0, take).map(heldAt) };
    });
  expiring.sort((a, b) => v.expires[a]! - v.expires[b]!);
  const firsts = (places: number[]) => (places.length > upTo ? places.slice(0, upTo) : places).map(heldAt);
  const overview: Overview = { at: now.toISOString(), counts, holders, expiring_soon: firsts(expiring), expired: firsts(expired) };
  if (shown !== undefined) overview.hidden = { held: heldCount - built, expiring_soon: expiring.length - overview.expiring_soon.length, expired: expired.length - overview.expired.length };
  return overview;
}

// ---- the bird's-eye view -------------------------------------------------------------

export interface MatrixRow {
  task: string;
  objective: string;
  status: TaskStatus;
  /** Per agent (same order as `agents`): `holds`, `submitted` (its work awaits review), or null. */
  cells: ("holds" | "submitted" | null)[];
}

export interface Placement {
  worktree: string | null;
  branch: string | null;
  scope: Actor["scope"];
  session: string | null;
  agent: string;
  status: AgentStatus;
}

export interface StatusView extends Overview {
  roster: Roster;
  /** Task x agent claim matrix over live work (todo, claimed, review); `total` rows in all (`rows` may hold only the first, see StatusInput.rowLimit). */
  matrix: { agents: string[]; rows: MatrixRow[]; total: number };
  /** Worktree x branch x session, one row per declared agent. */
  placements: Placement[];
  blocked: BlockedEdge[];
  review: ReviewItem[];
  /** Handoffs waiting in each agent's inbox (only agents with some). */
  inbox: { agent: string; waiting: number }[];
  conflicts: { summary: string; conflicting: number; pairs: PairResult[] } | null;
}

export interface StatusInput {
  /** The tasks as stored: whole records, the narrower ones of a view file (view-task.ts), or its columns (view-tasks.ts). */
  tasks: readonly ViewTask[] | ViewTasks;
  agents: AgentRecord[];
  conflicts: ConflictReport | null;
  config: Pick<Config, "staleAfterMs" | "disconnectedAfterMs" | "gcAfterMs" | "maxConcurrent">;
  now: Date;
  soonMs?: number;
  /** A text view that shows only the first matrix rows builds only those (the JSON view builds all). */
  rowLimit?: number;
  /** A text view that shows only the first lines of the overview's lists builds only those (buildOverview). */
  shown?: number;
  /** The roster of these agents and tasks at `now`, when the caller built it already (the merge preview needs it too). */
  roster?: Roster;
  /** Tasks left out of `tasks` (final ones a text view does not show), counted by status. */
  counted?: Partial<Record<TaskStatus, number>>;
  /** Whose view it is (the takeover grace of other agents' claims); absent: every claim by this clock alone. */
  viewer?: Viewer;
}

/**
 * Each task's status settled (task-ops.ts settle) by `ctx`, and the records that settling changed:
 * a task not claimed, or whose claim is live for the viewer (its own by this clock, another
 * agent's through the grace, as settle's expiredFor judges), is its own record, not read; only
 * the others are settled. No Date is parsed again per task.
 */
function settleAll(v: ViewTasks, ctx: OpContext): { statuses: TaskStatus[]; changed: Map<number, ViewTask> } {
  const nowMs = ctx.now.getTime();
  // Live until: the viewer's own claim by this clock, another agent's through the grace (as buildOverview, no number made a task).
  const otherUntil = nowMs - (ctx.takeoverGraceMs ?? 0);
  const me = ctx.actor.agent;
  const statuses = new Array<TaskStatus>(v.length);
  const changed = new Map<number, ViewTask>();
  const { status: stored, holder, expires } = v;
  for (let i = 0; i < v.length; i++) {
    const status = stored[i]!;
    const agent = holder[i];
    if (status !== "claimed" || agent === undefined || expires[i]! > (agent === me ? nowMs : otherUntil)) statuses[i] = status;
    else {
      const record = settle(v.record(i), ctx).record;
      changed.set(i, record);
      statuses[i] = record.status;
    }
  }
  return { statuses, changed };
}

/** Everything `status` shows, computed from stored records; the CLI only renders it. */
export function buildStatus(input: StatusInput): StatusView {
  const { now } = input;
  const v = asViewTasks(input.tasks);
  const ctx = viewerContext(now, input.viewer);
  // Settled once (lazy expiry, the viewer's grace): the overview's counts and every section below read the same.
  const { statuses, changed } = settleAll(v, ctx);
  const settled = (i: number) => changed.get(i) ?? v.record(i);
  const base = buildOverview(v, now, input.soonMs, input.counted, statuses, input.viewer, input.shown);
  const roster = input.roster ?? buildRoster(input.agents, v, now, input.config, input.viewer);

  const { flags, length: n } = v;
  const live: number[] = [];
  for (let i = 0; i < n; i++) if (statuses[i] === "todo" || statuses[i] === "claimed" || statuses[i] === "review") live.push(i);
  const names = [...new Set([...roster.agents.map((a) => a.agent), ...roster.undeclared_holders.map((u) => u.agent)])].sort();
  // A row has at most one marked cell: fill the row, then mark it (7,500 x 100 cells at 10,000 tasks).
  const column = new Map(names.map((n, i) => [n, i]));
  const rows: MatrixRow[] = (input.rowLimit === undefined ? live : live.slice(0, input.rowLimit)).map((i) => {
    const t = settled(i);
    const cells: MatrixRow["cells"] = new Array(names.length).fill(null);
    const holder = t.status === "claimed" ? t.claim?.agent : t.status === "review" ? t.review?.submitted_by : undefined;
    const at = holder !== undefined ? column.get(holder) : undefined;
    if (at !== undefined) cells[at] = t.status === "claimed" ? "holds" : "submitted";
    return { task: t.id, objective: t.objective, status: t.status, cells };
  });

  const placements: Placement[] = roster.agents
    .map((a) => ({ worktree: a.worktree, branch: a.branch, scope: a.scope, session: a.session, agent: a.agent, status: a.status }))
    .sort((a, b) => textOrder(a.worktree ?? "", b.worktree ?? "") || textOrder(a.agent, b.agent));

  // Only tasks that wait on others can be blocked: the map of every task is built only for them.
  const waiting: ViewTask[] = [];
  for (let i = 0; i < n; i++) if ((statuses[i] === "todo" || statuses[i] === "claimed") && flags[i]! & WAITS) waiting.push(settled(i));
  const byId = waiting.length ? placesById(v) : null;
  // Each blocker settled as the rest of the view (the viewer's grace for other agents' claims).
  const blocked = byId ? waiting.flatMap((t) => blockingEdges(t, { get: (id) => (byId.has(id) ? v.record(byId.get(id)!) : undefined) }, ctx)) : [];
  // Only tasks with handoffs, or waiting on others, can fill an inbox: agents x tasks stays small.
  const inboxTasks: ViewTask[] = [];
  for (let i = 0; i < n; i++) if (flags[i]! & (HANDS | WAITS)) inboxTasks.push(v.record(i));
  const inbox = inboxTasks.length ? names.map((agent) => ({ agent, waiting: inboxFor(agent, inboxTasks, now).length })).filter((x) => x.waiting > 0) : [];
  const reviewed: ViewTask[] = [];
  for (let i = 0; i < n; i++) if (statuses[i] === "review") reviewed.push(settled(i));
  const conflicts = input.conflicts
    ? { summary: conflictSummaryLine(input.conflicts), conflicting: input.conflicts.conflicting, pairs: input.conflicts.pairs.filter((p) => p.conflicts.length) }
    : null;
  return { ...base, roster, matrix: { agents: names, rows, total: live.length }, placements, blocked, review: reviewQueue(reviewed), inbox, conflicts };
}

/** Each task's place by id (the last of a repeated id, as a Map of the records would keep). */
function placesById(v: ViewTasks): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < v.length; i++) m.set(v.ids[i]!, i);
  return m;
}
