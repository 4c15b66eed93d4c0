// Drift: what each agent really changes (its branch's commits since its base, the uncommitted
// changes in its worktree, the edits its hooks saw) against what it declared (declaration.ts).
// And tasks whose lease keeps being renewed while the holder's branch stands still.
import { existsSync } from "node:fs";
import type { AgentRecord } from "../core/agent.ts";
import { declarationOf, declaredGlobs, declaresAnything, judgePaths, stuckSinceAt, MAX_SHOWN_PATHS, type AgentDrift, type Declaration, type DriftView, type StuckTask } from "../core/declaration.ts";
import type { HandoffEvent } from "../core/event.ts";
import { isIgnored } from "../core/lease-policy.ts";
import type { Lease } from "../core/lease.ts";
import type { ViewTask } from "../core/view-task.ts";
import { asViewTasks, firstBases, type ViewTasks } from "../core/view-tasks.ts";
import { mergeBase } from "../git/diff.ts";
import { branchTips, changedBetween, uncommittedPaths, type BranchTip } from "../git/drift-paths.ts";
import { isObjectId } from "../core/object-id.ts";
import type { RefTip } from "../git/refs.ts";
import { parseCommit, readTyped } from "./codec.ts";
import { loadLeases, loadPolicy } from "./lease-store.ts";
import { recordCatches } from "./catch-log.ts";
import { indexedLogEvents } from "./log-index.ts";
import { listTasks } from "./task-store.ts";
import { localMachine } from "./machine.ts";
import type { Store } from "./store.ts";
import { groupBy } from "../core/group-by.ts";

/** The commit an agent's work is measured from: its tasks' claim base (`firstBase`: ViewTasks.firstBase), else where its branch left the integration branch. */
async function baseOf(store: Store, tip: string, firstBase: string | null, tips: Map<string, BranchTip>): Promise<string | null> {
  // The earliest claim's base: work on the later tasks is in its range too.
  if (firstBase) return firstBase;
  const integration = store.config.integrationBranch;
  if (!integration) return null;
  // Two commits name the answer for good: views that keep records (status) ask git once per pair.
  const other = tips.get(integration)?.commit;
  const ask = () => mergeBase(store.cwd, tip, `refs/heads/${integration}`);
  return other ? store.kept(`merge-base:${tip}:${other}`, ask) : ask();
}

/** What git shows `a` changed: committed since its base on its branch, and uncommitted in its worktree (when on this machine). */
async function changedBy(store: Store, a: AgentRecord, firstBase: string | null, tips: Map<string, BranchTip>, machine: () => Promise<string>): Promise<string[]> {
  const paths: string[] = [];
  if (a.branch) {
    const tip = tips.get(a.branch);
    const base = tip ? await baseOf(store, tip.commit, firstBase, tips) : null;
    if (tip && base) paths.push(...(await store.kept(`changed:${base}..${tip.commit}`, () => changedBetween(store.cwd, base, tip.commit))));
  }
  // A worktree path recorded on another machine may name an unrelated folder here. The folder is
  // looked for first: the machine name costs a `git config` process, asked once and only if needed.
  if (a.worktree && existsSync(a.worktree) && (!a.machine || a.machine === (await machine()))) paths.push(...(await uncommittedPaths(a.worktree)));
  return paths;
}

const DRIFT_PARALLEL = 8;

export interface DriftInput {
  agents: AgentRecord[];
  /** The tasks as stored: whole records, the narrower ones of a view file (core/view-task.ts), or its columns (core/view-tasks.ts). */
  tasks: readonly ViewTask[] | ViewTasks;
  leases: Lease[];
  /** The indexed log events (log-index.ts): undeclared edits the hooks saw. */
  logged: HandoffEvent[];
  /** A bounded text view shows the first this many stuck claims: only those are built, the rest counted (`stuck_total`). */
  stuckShown?: number;
  /** The local branches as the caller listed them where refs are files (`store.listRefs("refs/heads/")`): not listed again. */
  heads?: readonly RefTip[];
}

export async function computeDrift(store: Store, input: DriftInput): Promise<DriftView> {
  const now = store.now();
  const policy = loadPolicy(store);
  const agents: AgentDrift[] = [];
  const tips = await branchTipsOf(store, input.heads);
  let asked: Promise<string> | null = null;
  const machine = () => (asked ??= localMachine(store));
  // Each agent's share of the tasks, leases and events, grouped once: at 10,000 tasks and 100
  // agents, filtering all of them for each agent was a million comparisons per view.
  const v = asViewTasks(input.tasks);
  const leasesBy = groupBy(input.leases, (l) => l.agent);
  const editsBy = groupBy(input.logged.filter((e) => e.type === "undeclared_edit"), (e) => e.agent);
  // Each agent's git reads are independent: run them side by side, a few at a time.
  const one = async (a: AgentRecord): Promise<AgentDrift | null> => {
    if (a.ended_at) return null;
    // What its held tasks declare, by their scopes (ViewTasks.heldScopes): no record read.
    const scopes = v.heldScopes(a.agent);
    const own = leasesBy.get(a.agent) ?? [];
    // An agent that declared nothing has nothing to drift from (and its changes are not asked of git).
    if (!declaresAnything(a.agent, a, scopes.length > 0, own, now)) return null;
    const seen = (editsBy.get(a.agent) ?? []).filter((e) => e.at >= a.started_at).flatMap((e) => e.paths ?? []);
    const changed = [...(await changedBy(store, a, v.firstBase(a.agent), tips, machine)), ...seen].filter((p) => !isIgnored(policy, p));
    if (!changed.length) return null;
    // The declaration (every glob of every held task's scope) is built only for an agent that changed something.
    const globs = declaredGlobs(a.agent, a, scopes, own, now);
    const { undeclared, unjudged } = judgePaths({ globs }, changed);
    // An agent whose changes could not all be judged is listed too, with how many: never passed over unsaid.
    if (!undeclared.length && !unjudged.length) return null;
    return { agent: a.agent, declared: globs, undeclared: undeclared.slice(0, MAX_SHOWN_PATHS), count: undeclared.length, unjudged: unjudged.length };
  };
  for (let i = 0; i < input.agents.length; i += DRIFT_PARALLEL) {
    for (const r of await Promise.all(input.agents.slice(i, i + DRIFT_PARALLEL).map(one))) if (r) agents.push(r);
  }
  if (input.stuckShown === undefined) return { agents, stuck: stuckTasks(store, v, tips) };
  const { rows, total } = stuckClaims(store, v, tips, input.stuckShown);
  return { agents, stuck: rows, stuck_total: total };
}

/**
 * Every local branch's tip and its commit time. Where refs are files, the tips are read in-process
 * and each commit's time is kept by commit id between runs (`store.kept`: a commit's time never
 * changes), so a view whose branches did not move starts no git process for them. Anything
 * unexpected (a tip that is not a commit id, or not a commit) asks `git for-each-ref` instead.
 */
async function branchTipsOf(store: Store, heads?: readonly RefTip[]): Promise<Map<string, BranchTip>> {
  if (!store.usesRefFiles) return branchTips(store.cwd);
  const tips = new Map<string, BranchTip>();
  for (const { name, oid } of heads ?? (await store.listRefs("refs/heads/"))) {
    if (!isObjectId(oid)) return branchTips(store.cwd);
    const secs = await store.kept(`commit-time:${oid}`, async () => {
      try {
        return parseCommit(await readTyped(store.reader, oid, "commit", name)).time;
      } catch {
        return null;
      }
    });
    if (typeof secs !== "number") return branchTips(store.cwd);
    tips.set(name.slice("refs/heads/".length), { commit: oid, at: new Date(secs * 1000) });
  }
  return tips;
}

/** A time as toISOString writes it. */
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function stuckTasks(store: Store, tasks: readonly ViewTask[] | ViewTasks, tips: Map<string, BranchTip>): StuckTask[] {
  return stuckClaims(store, asViewTasks(tasks), tips, Infinity).rows;
}

/** The first `shown` stuck claims' rows (in the tasks' order) and how many claims are stuck: a bounded view makes only the rows it shows. */
export function stuckClaims(store: Store, v: ViewTasks, tips: Map<string, BranchTip>, shown: number): { rows: StuckTask[]; total: number } {
  const now = store.now();
  const rows: StuckTask[] = [];
  let total = 0;
  const { branch, claimedAt, ttl, expires } = v;
  const threshold = store.config.stuckAfterMs;
  const nowMs = now.getTime();
  // Each branch's last move read once, not a Date asked per claim.
  const moved = new Map([...tips].map(([name, tip]) => [name, tip.at.getTime()]));
  // At 10,000 tasks the loop runs 7,500 times, in the interpreter: claims on one branch mostly
  // follow each other, so its last move is looked up when the branch changes, not per claim.
  let on: string | null | undefined;
  let last: number | null = null;
  for (let i = 0, n = v.length; i < n; i++) {
    // Only a live claim can be stuck (NaN: not stored as claimed, or no claim).
    const until = expires[i]!;
    if (!(until > nowMs)) continue;
    if (branch[i] !== on) {
      on = branch[i];
      last = on ? (moved.get(on) ?? null) : null;
    }
    const at = claimedAt[i]!;
    const since = stuckSinceAt(at, ttl[i]!, until, last, nowMs, threshold);
    if (Number.isNaN(since)) continue;
    if (total++ >= shown) continue;
    const c = v.record(i).claim!;
    // The claim's own time as written (toISOString's form) is the answer itself: no Date to format per claim.
    const written = since === at && ISO_MS.test(c.claimed_at) ? c.claimed_at : new Date(since).toISOString();
    rows.push({ task: v.ids[i]!, agent: c.agent, branch: c.branch, since: written, still_ms: nowMs - since });
  }
  return { rows, total };
}

export type { AgentDrift, Declaration, DriftView, StuckTask };

/** How an undeclared_edit recorded by a heartbeat (not a hook's notice to the agent) is marked. */
export const HEARTBEAT_NOTE = "seen at heartbeat";

/** What a heartbeat recorded of its worktree's drift, and how many changed paths it could not judge (never recorded). */
export interface WorktreeDrift {
  recorded: string[];
  unjudged: number;
}

/**
 * An explicit heartbeat's share: the caller's own undeclared changes in its worktree (committed
 * since its base, and uncommitted), recorded as an `undeclared_edit` event once per path and
 * session. So another clone, which cannot look into this worktree, sees them too. Best effort.
 */
export async function recordWorktreeDrift(store: Store, record: AgentRecord): Promise<WorktreeDrift> {
  const none = { recorded: [], unjudged: 0 };
  if (!store.repo.workTree || record.ended_at) return none;
  const now = store.now();
  const [{ tasks }, { set }] = await Promise.all([listTasks(store, { settled: false }), loadLeases(store)]);
  const d = declarationOf(record.agent, record, tasks, set.leases, now);
  if (!d) return none;
  const policy = loadPolicy(store);
  const here = { ...record, worktree: store.repo.workTree };
  const changed = (await changedBy(store, here, firstBases(tasks).get(record.agent) ?? null, await branchTips(store.cwd), () => localMachine(store))).filter((p) => !isIgnored(policy, p));
  const { undeclared, unjudged } = judgePaths(d, changed);
  const told = new Set((await indexedLogEvents(store)).filter((e) => e.type === "undeclared_edit" && e.agent === record.agent && e.at >= record.started_at).flatMap((e) => e.paths ?? []));
  const fresh = undeclared.filter((p) => !told.has(p)).slice(0, 100);
  if (!fresh.length) return { recorded: [], unjudged: unjudged.length };
  const { scope, worktree, branch } = store.actor;
  await recordCatches(store, [{ type: "undeclared_edit", task: "", agent: record.agent, at: now.toISOString(), scope, worktree, branch, paths: fresh, note: HEARTBEAT_NOTE }]);
  return { recorded: fresh, unjudged: unjudged.length };
}
