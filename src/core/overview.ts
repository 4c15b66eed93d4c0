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
import { claimExpiries } from "./claim-expiry.ts";
import type { ViewTask } from "./view-task.ts";

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
}

/**
 * The first bird's-eye view: tasks by state, who holds what, what expires soon. Another agent's
 * claim inside the viewer's takeover grace is held (with `grace_until`), not expired: a claim of
 * it is refused until then.
 */
export function buildOverview(stored: ViewTask[], now: Date, soonMs = 5 * 60_000, counted: Partial<Record<TaskStatus, number>> = {}, settledAlready?: readonly ViewTask[], viewer?: Viewer, expiries?: Float64Array): Overview {
  const counts: Record<TaskStatus, number> = { todo: 0, claimed: 0, done: 0, failed: 0, cancelled: 0, review: 0 };
  for (const [status, n] of Object.entries(counted) as [TaskStatus, number][]) if (status in counts) counts[status] += n;
  const byAgent = new Map<string, HeldTask[]>();
  const expiring: HeldTask[] = [];
  const expired: HeldTask[] = [];
  const ctx = viewerContext(now, viewer);
  for (let i = 0; i < stored.length; i++) {
    const task = stored[i]!;
    counts[(settledAlready ? settledAlready[i]! : settle(task, ctx).record).status]++;
    const claim = task.claim;
    if (!claim || task.status !== "claimed") continue;
    const held: HeldTask = {
      task: task.id,
      objective: task.objective,
      agent: claim.agent,
      expires_at: claim.expires_at,
      expires_in_ms: (expiries ? expiries[i]! : Date.parse(claim.expires_at)) - now.getTime(),
      fence: claim.fence,
      worktree: claim.worktree,
      branch: claim.branch,
      scope: claim.scope,
    };
    const graceUntil = held.expires_in_ms <= 0 ? claimGraceUntil(task, ctx) : null;
    if (graceUntil) held.grace_until = graceUntil;
    else if (held.expires_in_ms <= 0) {
      expired.push(held);
      continue;
    }
    const mine = byAgent.get(claim.agent);
    if (mine) mine.push(held);
    else byAgent.set(claim.agent, [held]);
    // A claim inside the grace has expired already: its line says how long it stands.
    if (!graceUntil && held.expires_in_ms <= soonMs) expiring.push(held);
  }
  const holders = [...byAgent.entries()].sort(([a], [b]) => textOrder(a, b)).map(([agent, tasks]) => ({ agent, tasks }));
  expiring.sort((a, b) => a.expires_in_ms - b.expires_in_ms);
  return { at: now.toISOString(), counts, holders, expiring_soon: expiring, expired };
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
  /** The tasks as stored: whole records, or the narrower ones of a view file (view-task.ts). */
  tasks: ViewTask[];
  agents: AgentRecord[];
  conflicts: ConflictReport | null;
  config: Pick<Config, "staleAfterMs" | "disconnectedAfterMs" | "gcAfterMs" | "maxConcurrent">;
  now: Date;
  soonMs?: number;
  /** A text view that shows only the first matrix rows builds only those (the JSON view builds all). */
  rowLimit?: number;
  /** The roster of these agents and tasks at `now`, when the caller built it already (the merge preview needs it too). */
  roster?: Roster;
  /** Tasks left out of `tasks` (final ones a text view does not show), counted by status. */
  counted?: Partial<Record<TaskStatus, number>>;
  /** Whose view it is (the takeover grace of other agents' claims); absent: every claim by this clock alone. */
  viewer?: Viewer;
  /** claimExpiries(tasks), when the caller parsed them already (the roster and drift read them too). */
  expiries?: Float64Array;
}

/**
 * Each task settled (task-ops.ts settle) by `ctx`: a task not claimed, or whose claim is live for
 * the viewer (its own by this clock, another agent's through the grace, as settle's expiredFor
 * judges), is its own record; only the others are settled. No Date is parsed again per task.
 */
function settleAll(tasks: readonly ViewTask[], expiries: Float64Array, ctx: OpContext): ViewTask[] {
  const nowMs = ctx.now.getTime();
  const grace = ctx.takeoverGraceMs ?? 0;
  const out = new Array<ViewTask>(tasks.length);
  for (let i = 0; i < tasks.length; i++) {
    const t = tasks[i]!;
    out[i] = t.status !== "claimed" || !t.claim || expiries[i]! + (t.claim.agent === ctx.actor.agent ? 0 : grace) > nowMs ? t : settle(t, ctx).record;
  }
  return out;
}

/** Everything `status` shows, computed from stored records; the CLI only renders it. */
export function buildStatus(input: StatusInput): StatusView {
  const { tasks, now } = input;
  const ctx = viewerContext(now, input.viewer);
  const expiries = input.expiries ?? claimExpiries(tasks);
  // Settled once (lazy expiry, the viewer's grace): the overview's counts and every section below read the same.
  const settled = settleAll(tasks, expiries, ctx);
  const base = buildOverview(tasks, now, input.soonMs, input.counted, settled, input.viewer, expiries);
  const roster = input.roster ?? buildRoster(input.agents, tasks, now, input.config, input.viewer, expiries);

  const live = settled.filter((t) => t.status === "todo" || t.status === "claimed" || t.status === "review");
  const names = [...new Set([...roster.agents.map((a) => a.agent), ...roster.undeclared_holders.map((u) => u.agent)])].sort();
  // A row has at most one marked cell: fill the row, then mark it (7,500 x 100 cells at 10,000 tasks).
  const column = new Map(names.map((n, i) => [n, i]));
  const rows: MatrixRow[] = (input.rowLimit === undefined ? live : live.slice(0, input.rowLimit)).map((t) => {
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
  const waiting = settled.filter((t) => (t.status === "todo" || t.status === "claimed") && t.after?.length);
  const byId = waiting.length ? new Map(tasks.map((t) => [t.id, t])) : null;
  // Each blocker settled as the rest of the view (the viewer's grace for other agents' claims).
  const blocked = byId ? waiting.flatMap((t) => blockingEdges(t, byId, ctx)) : [];
  // Only tasks with handoffs, or waiting on others, can fill an inbox: agents x tasks stays small.
  const inboxTasks = tasks.filter((t) => t.handoffs?.length || t.after?.length);
  const inbox = inboxTasks.length ? names.map((agent) => ({ agent, waiting: inboxFor(agent, inboxTasks, now).length })).filter((x) => x.waiting > 0) : [];
  const conflicts = input.conflicts
    ? { summary: conflictSummaryLine(input.conflicts), conflicting: input.conflicts.conflicting, pairs: input.conflicts.pairs.filter((p) => p.conflicts.length) }
    : null;
  return { ...base, roster, matrix: { agents: names, rows, total: live.length }, placements, blocked, review: reviewQueue(settled), inbox, conflicts };
}
