// The file-lease operations every front end calls (CLI, hooks, MCP): resolve paths, run the pure
// operation under compare-and-swap, return what the caller needs to print.
import { statSync } from "node:fs";
import { checkPaths, type PathAnswer } from "../core/check.ts";
import { parseDuration } from "../core/duration.ts";
import { fail, HandoffError } from "../core/errors.ts";
import { validateTaskId } from "../core/ids.ts";
import { graceUntil, isLeaseLiveFor, type Lease, type LeaseSet } from "../core/lease.ts";
import { acquireLeases, releaseLeases, type LeaseRequest } from "../core/lease-ops.ts";
import { isIgnored, type Verdict } from "../core/lease-policy.ts";
import { normalizeRepoPath } from "../core/paths.ts";
import { lexicallyInside, realPatternLocation } from "./real-path.ts";
import { leaseForTaskRefusal } from "../core/lease-for-task.ts";
import { scopeProblem } from "../core/task-ops.ts";
import { refuse } from "../core/outcome.ts";
import { loadLeases, loadLeasesFor, loadPolicy, mutateLeases } from "./lease-store.ts";
import { staleLeaseNote } from "./stale-leases.ts";
import { overlapWitness } from "../core/glob-overlap.ts";
import { GRANT_MATCH_BUDGET, newMatchBudget } from "../core/match-budget.ts";
import { unextendedNote } from "../core/task-leases.ts";
import type { Task } from "../core/task.ts";
import { checkContext, viewGraceMs } from "./check-context.ts";
import { extendClaimsCovering } from "./claim-extend.ts";
import { ReadMoved } from "./rests-on.ts";
import { loadTask, taskRef } from "./task-store.ts";
import type { Store } from "./store.ts";

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * `p` (a path or a glob, read against `cwd`) in repo-relative form, its leading folders followed
 * through symlinks as a write through them would go. Outside the repository, it is refused named
 * as typed; said of a symlink only where one was followed (`../x` is outside by its own words).
 */
function realRepoPath(p: string, root: string, cwd: string, symlinkRefusal: (real: string) => string): string {
  // What is wrong with the input by its own words (an extglob, .git, outside) is said as typed.
  const typed = normalizeRepoPath(p, root, cwd);
  const real = realPatternLocation(p, cwd);
  if (real === p) return typed;
  try {
    return normalizeRepoPath(real, root, cwd);
  } catch (e) {
    if (e instanceof HandoffError && real !== p && /outside the repository/.test(e.message)) {
      if (lexicallyInside(p, root, cwd)) fail("invalid_input", symlinkRefusal(real), { path: p, real });
      fail("invalid_input", `path ${JSON.stringify(p.slice(0, 80))} is outside the repository ${root}`, { path: p });
    }
    throw e;
  }
}

/** Repo-relative POSIX forms of what the caller typed, read against `cwd` (default: process cwd). */
export function resolvePaths(store: Store, inputs: string[], cwd = process.cwd()): string[] {
  const root = store.repo.workTree;
  if (!root) fail("invalid_input", "file leases need a worktree (this is a bare repository)");
  return inputs.map((p) => realRepoPath(p, root, cwd, (real) => `path ${JSON.stringify(p.slice(0, 80))} is a symlink to ${real}, outside the repository ${root}`));
}

/**
 * A task's scope globs in lease form, read against the repository root (like .gitignore), through
 * symlinks as a lease's paths are: a scope through a link out of the repository would lease a file
 * no check inside it can see.
 */
export function normalizeScope(store: Store, globs: string[]): string[] {
  // The task's own rules first (count, length, printable), so their messages name the scope.
  const problem = scopeProblem(globs);
  if (problem) fail("invalid_input", problem);
  const root = store.repo.workTree;
  if (!root) return globs;
  return [...new Set(globs.map((g) => realRepoPath(g, root, root, (real) => `scope ${JSON.stringify(g.slice(0, 80))} goes through a symlink to ${real}, outside the repository ${root}`)))];
}

export interface LeaseOptions {
  exclusive?: boolean;
  task?: string;
  ttl?: string;
  reason?: string;
  cwd?: string;
  auto?: boolean;
}

export interface LeaseResult {
  leased: Lease[];
  /** Paths the policy ignores: never leased. */
  ignored: string[];
  /** `--task` names no task here (a typo, or one not synced yet): the lease stands on its own TTL. A task that is here, the caller must hold. */
  task_not_found?: string;
  /** Claims due for extension whose leases could not be compared with this lease within the budget: not extended. */
  not_extended?: { tasks: string[]; note: string };
}

export async function lease(store: Store, inputs: string[], opts: LeaseOptions = {}): Promise<LeaseResult> {
  const ttlMs = opts.ttl === undefined ? store.config.leaseTtlMs : parseDuration(opts.ttl, "--ttl");
  const task = opts.task === undefined ? null : validateTaskId(opts.task);
  const policy = loadPolicy(store);
  // An existing folder named without a trailing slash means what is inside it.
  const all = resolvePaths(store, inputs, opts.cwd).map((p) => (isDirectory(`${store.repo.workTree}/${p}`) ? `${p}/**` : p));
  // A lease for a task is justified only while the caller holds the task (core/lease-for-task.ts,
  // the rule doctor judges leases by): it takes the claim's expiry, set in the same write, and the
  // task's next transition ends it. A task not (yet) here: the lease stands on its own TTL. Judged
  // before the policy's ignores, so paths that are all ignored do not hide a refusal.
  const found = task ? await taskForLease(store, task) : null;
  const ignored = all.filter((p) => isIgnored(policy, p));
  const patterns = all.filter((p) => !ignored.includes(p));
  if (!patterns.length) return { leased: [], ignored };
  const exclusive = !!opts.exclusive;
  const req = { patterns, exclusive, task, ttlMs, reason: opts.reason ?? null, ...(opts.auto ? { auto: true } : {}) };
  const set = await leaseResting(store, found, req);
  // A lease in a claimed task's scope (or for it) is work on it: the claim is extended when due
  // (its leases with it, in one transaction).
  // Compared within a grant's budget: own leases synced from elsewhere may be costly globs too.
  const work = newMatchBudget(GRANT_MATCH_BUDGET);
  const extended = await extendClaimsCovering(store, set.leases, (l) => l.task === task || patterns.some((p) => overlapWitness(p, l.pattern, work) !== null));
  const final = extended.renewed.length ? (await loadLeases(store)).set : set;
  const leased = final.leases.filter((l) => l.agent === store.actor.agent && patterns.includes(l.pattern));
  const notExtended = extended.unchecked.length ? { not_extended: { tasks: extended.unchecked, note: unextendedNote(extended.unchecked, GRANT_MATCH_BUDGET, "a grant") } } : {};
  return { leased, ignored, ...(found === "not_found" ? { task_not_found: task! } : {}), ...notExtended };
}

/**
 * `--task`'s record and tip, refused before anything is written unless the caller holds it (no
 * sync remote asked, so a refusal needs no network); "not_found" for a task not (yet) here (a
 * lease may come before its task arrives by sync).
 */
async function taskForLease(store: Store, id: string): Promise<{ task: Task; tip: string } | "not_found"> {
  let read;
  try {
    read = await loadTask(store, id);
  } catch (e) {
    if (e instanceof HandoffError && e.code === "not_found") return "not_found";
    throw e;
  }
  const refusal = leaseForTaskRefusal(read.task, await store.writeContext(store.now()));
  if (refusal) throw new HandoffError(refusal);
  return read;
}

/**
 * The grant, for a task the caller holds judged again by the write's own clock and resting on the
 * task record read (rests-on.ts): a release, finish or takeover landing meanwhile would leave a
 * lease its task no longer justifies, so the write does not count and the task is read again.
 */
async function leaseResting(store: Store, found: { task: Task; tip: string } | "not_found" | null, req: Omit<LeaseRequest, "until">): Promise<LeaseSet> {
  for (let round = 0; ; round++) {
    if (!found || found === "not_found") return mutateLeases(store, (s, ctx) => acquireLeases(s, req, ctx), { exclusive: req.exclusive });
    const { task, tip } = found;
    try {
      return await mutateLeases(
        store,
        (s, ctx) => {
          const refusal = leaseForTaskRefusal(task, ctx);
          if (refusal) return refuse(refusal);
          return acquireLeases(s, { ...req, until: { expiresAt: task.claim!.expires_at, ttlMs: task.claim!.ttl_ms } }, ctx);
        },
        { exclusive: req.exclusive, restsOn: new Map([[taskRef(task.id), tip]]) },
      );
    } catch (e) {
      if (!(e instanceof ReadMoved)) throw e;
      // Not a fault: other writers kept moving the task. Said with a stable code.
      if (round >= 5) fail("lost_race", `task ${task.id} kept changing while leasing for it (${round + 1} tries); try again`, { task: task.id });
      found = await taskForLease(store, task.id);
    }
  }
}

/** A path `unlease` could not release, and why. */
export interface NotReleased {
  path: string;
  code: "not_holder" | "not_found";
  holders: string[];
}

/**
 * Releases what the caller holds of `inputs`, reporting per path: one path it does not hold no
 * longer refuses the others. Refused (nothing changes) only when it holds none of them.
 */
export async function unlease(store: Store, inputs: string[], opts: { all?: boolean; cwd?: string } = {}): Promise<{ released: string[]; not_released: NotReleased[] }> {
  const patterns = opts.all ? [] : [...new Set(resolvePaths(store, inputs, opts.cwd))];
  const all = (await loadLeases(store)).set.leases;
  const before = all.filter((l) => l.agent === store.actor.agent).map((l) => l.pattern);
  const held = patterns.filter((p) => before.includes(p));
  const notReleased: NotReleased[] = patterns
    .filter((p) => !held.includes(p))
    .map((p) => {
      const holders = [...new Set(all.filter((l) => l.pattern === p).map((l) => l.agent))];
      return { path: p, code: holders.length ? "not_holder" : "not_found", holders };
    });
  // None held: the refusal names them all (and who holds them), as before.
  const req = opts.all ? { all: true } : { patterns: held.length ? held : patterns };
  const set = await mutateLeases(store, (s, ctx) => releaseLeases(s, req, ctx));
  const after = new Set(set.leases.filter((l) => l.agent === store.actor.agent).map((l) => l.pattern));
  return { released: before.filter((p) => !after.has(p)), not_released: notReleased };
}

/**
 * A lease as listed: `newer_on_remote` while the remote's lease set is held back as newer (this
 * copy may be stale); `grace_until` on another agent's lease expired by this clock that stands for
 * the takeover grace until then (clock skew: a write of its path is refused until then).
 */
export type ListedLease = Lease & { newer_on_remote?: true; grace_until?: string };

/**
 * Live leases, optionally of one agent, ordered by pattern, as `leases` and MCP's list_leases show
 * them, other agents' leases inside the takeover grace among them (with `grace_until`), as a write
 * would count them (check-context.ts): while the lease set is held back as newer, each is marked
 * and `stale` says why (the CLI prints it on stderr, so its --json array keeps its shape; MCP
 * returns it as a notice).
 */
export async function listLeases(store: Store, opts: { agent?: string } = {}): Promise<{ leases: ListedLease[]; stale?: string }> {
  const { set } = await loadLeases(store);
  const now = store.now();
  const me = store.actor.agent;
  const grace = await viewGraceMs(store);
  const live: ListedLease[] = set.leases
    .filter((l) => isLeaseLiveFor(l, now, me, grace) && (opts.agent === undefined || l.agent === opts.agent))
    .map((l) => {
      const until = graceUntil(l, now, me, grace);
      return until ? { ...l, grace_until: until } : l;
    });
  const stale = await staleLeaseNote(store);
  return stale ? { leases: live.map((l) => ({ ...l, newer_on_remote: true as const })), stale } : { leases: live };
}

export interface CheckResult {
  agent: string;
  mode: string;
  verdict: Verdict;
  paths: PathAnswer[];
  /** The remote's lease set is from a newer git-handoff: these answers come from a copy that may be stale. */
  newer_on_remote?: true;
}

/**
 * Answers for the calling agent, per path: deny / warn / info / ok, another agent's lease standing
 * for the takeover grace past its expiry as for a write (check-context.ts). Reads one ref; writes nothing.
 */
export async function check(store: Store, inputs: string[], opts: { cwd?: string } = {}): Promise<CheckResult> {
  const paths = resolvePaths(store, inputs, opts.cwd);
  // Only the leases that can cover the paths (a one-shot check reads those lines of the cache).
  const { set } = await loadLeasesFor(store, { paths, agent: store.actor.agent });
  const ctx = await checkContext(store);
  const r = checkPaths(paths, set.leases, ctx);
  return { agent: ctx.agent, mode: ctx.policy.mode, verdict: r.verdict, paths: r.answers, ...(ctx.stale ? { newer_on_remote: true as const } : {}) };
}
