// The decision every pre-edit hook shares: check the paths for the calling agent, then (declare by
// doing) lease what it is about to edit, and renew what it holds. Writes happen only on an agent's
// first edit of a file, or when its leases are a third through their time.
import { answerText, checkPaths, type PathAnswer } from "../core/check.ts";
import { HandoffError } from "../core/errors.ts";
import { acquireLeases, renewLeases } from "../core/lease-ops.ts";
import { isLeaseLive, type Lease } from "../core/lease.ts";
import { matchesPath } from "../core/glob-overlap.ts";
import { LOCAL_MATCH_BUDGET, newMatchBudget, withinBudget, type MatchBudget } from "../core/match-budget.ts";
import { unextendedNote } from "../core/task-leases.ts";
import { normalizeRepoPath } from "../core/paths.ts";
import { lexicallyInside, writeLocations } from "../store/real-path.ts";
import { loadLeases, loadLeasesFor, loadPolicy, leaseUpdate } from "../store/lease-store.ts";
import { checkContext } from "../store/check-context.ts";
import type { Store } from "../store/store.ts";
import { extendClaimsCovering } from "../store/claim-extend.ts";
import type { EditAnswer } from "./agents.ts";
import { mark } from "./profile.ts";

export interface EditCheck extends EditAnswer {
  /** Paths inside the repository, repo-relative. */
  checked: string[];
  /** Paths outside the repository: not ours to govern, reported, never blocked. */
  outside: string[];
  autoLeased: string[];
  /** The answer per checked path (stats log the non-ok ones). */
  answers: PathAnswer[];
  /** The leases the check read (those near the checked paths), when it wrote none: what else looks at them need not read them again. */
  leases?: Lease[];
}

export interface CheckOptions {
  /**
   * Words of a shell command, not edits: only other agents' exclusive leases are named, as a
   * warning (the command may only read them), and nothing is leased or renewed.
   */
  shell?: boolean;
  /** Check only (after the edit, to tell the model): no lease is taken or renewed. */
  readOnly?: boolean;
}

export async function checkEdit(store: Store, rawPaths: string[], cwd: string, opts: CheckOptions = {}): Promise<EditCheck> {
  const root = store.repo.workTree!;
  const checked: string[] = [];
  const outside: string[] = [];
  /** In-repo paths whose real location (through a symlink) is outside the repository. */
  const escaping: string[] = [];
  for (const p of rawPaths) {
    // Judged where the file really is: a path through a symlink to a leased file is that file. A
    // `..` after a symlink is judged both where the kernel takes it and where a tool that tidies
    // the path first writes (real-path.ts writeLocations): `src/link/../a.ts` with src/link -> ../lib
    // is a.ts to the kernel, and was let through as the free src/a.ts while a.ts was leased.
    for (const real of writeLocations(p, cwd)) {
      try {
        const path = normalizeRepoPath(real, root, cwd);
        if (!checked.includes(path)) checked.push(path);
      } catch (e) {
        if (e instanceof HandoffError && e.code === "invalid_input" && /outside the repository|inside \.git/.test(e.message)) {
          if (!outside.includes(p)) outside.push(p);
          if (real !== p && lexicallyInside(p, root, cwd) && !escaping.includes(p)) escaping.push(p);
        } else if (!opts.shell) throw e; // a word of a command that is no path is simply not one
      }
    }
  }
  if (opts.shell) return shellCheck(store, checked);
  const policy = loadPolicy(store);
  const agent = store.actor.agent;
  const read = await loadLeasesFor(store, { paths: checked, agent });
  mark("leases read");
  const now = store.now();
  // One context for the answer and the write that may follow (an auto-lease, a renewal): through a
  // sync remote another agent's expired lease stands for the takeover grace in both, so an edit the
  // write would be refused for is not answered "ok" (the grace is the estimate on file, no network).
  const op = await store.writeContext(now);
  const ctx = await checkContext(store, { policy, op });
  // A lease set held back as newer: answered from this clone's copy with a warning, and not written.
  const stale = ctx.stale;
  const r = checkPaths(checked, read.set.leases, ctx);
  const strictEscape = escaping.length > 0 && store.config.mode === "strict";
  const deny = r.verdict === "deny" || strictEscape;
  let text = answerText(r.answers);
  if (outside.length) text = [text, `git-handoff: not checked (outside the repository): ${outside.join(", ")}`].filter(Boolean).join("\n");
  if (escaping.length) {
    text += `\ngit-handoff: warning: ${escaping.join(", ")} ${escaping.length === 1 ? "is a path" : "are paths"} in the repository through a symlink to outside it${strictEscape ? " (strict mode: denied)" : ""}`;
  }

  const autoLeased: string[] = [];
  let wrote = false;
  // The agent's own leases are matched within a budget of their own (match-budget.ts): a lease set
  // synced from another clone may hold costly globs in its name, and other agents' leases spending
  // the check's budget must not keep its claims from being extended.
  const mineWork = newMatchBudget(LOCAL_MATCH_BUDGET);
  if (!deny && !opts.readOnly && !stale) {
    const mine = read.set.leases.filter((l) => l.agent === agent && isLeaseLive(l, now));
    const fresh = store.config.autoLease ? r.answers.filter((a) => !a.ignored && !coveredBy(mine, a.path, mineWork)).map((a) => a.path) : [];
    // Whether to write depends on the agent's own leases only (renewLeases has no steps otherwise).
    // A write settles the set: through a sync remote, another agent's expired lease is swept or
    // overridden only past the takeover grace (`op`), or a clock ahead would push a lease set
    // without a lease still live for its holder.
    const renewal = renewLeases(read.set, op);
    const wantsWrite = fresh.length > 0 || (renewal.ok && renewal.steps.length > 0);
    // A write needs the whole record (the read above may hold only the leases near these paths).
    const { set, tip } = wantsWrite && read.partial ? await loadLeases(store) : read;
    const out = fresh.length
      ? acquireLeases(set, { patterns: fresh, exclusive: false, task: null, ttlMs: store.config.leaseTtlMs, reason: "first edit", auto: true }, op)
      : set === read.set
        ? renewal
        : renewLeases(set, op);
    // Losing a race here only means someone wrote meanwhile: the next edit tries again.
    if (out.ok && out.steps.length) {
      wrote = true;
      const update = leaseUpdate(store, tip, out);
      if (update) {
        const res = await store.updateRefs([update]);
        if (res.ok) autoLeased.push(...fresh);
      }
    }
  }
  // An edit inside a claimed task's scope is work on it: its claim is extended once a third through.
  // A due claim whose leases were not looked at within the budget is left as it is, and said so.
  if (!deny && !opts.readOnly && !stale && checked.length) {
    const extended = await extendClaimsCovering(store, read.set.leases, (l) => checked.some((p) => matchesPath(l.pattern, p, mineWork)));
    if (extended.renewed.length) wrote = true;
    if (extended.unchecked.length) text = [text, `git-handoff notice: ${unextendedNote(extended.unchecked, LOCAL_MATCH_BUDGET, "one check")}`].filter(Boolean).join("\n");
  }
  return { decision: deny ? "deny" : "allow", text, checked, outside, autoLeased, answers: r.answers, ...(wrote ? {} : { leases: read.set.leases }) };
}

/**
 * Whether one of the agent's own leases covers `path`: its own pattern first (free), then globs
 * within `work`. One not looked at counts as not covering: the edit then takes its own shared
 * lease on the file (declare by doing), which is cheap to match from then on.
 */
function coveredBy(mine: Lease[], path: string, work: MatchBudget): boolean {
  if (mine.some((l) => l.pattern === path)) return true;
  return withinBudget(() => mine.some((l) => matchesPath(l.pattern, path, work))) === true;
}

/**
 * A shell command naming files inside other agents' exclusive leases: a warning, never a denial.
 * While the lease set is held back as newer, the words this clone's stale copy finds free get one
 * warning line too, also in strict mode: a word scan cannot tell a file a command changes from
 * one it reads, and a known exclusive lease is only warned about either.
 */
async function shellCheck(store: Store, checked: string[]): Promise<EditCheck> {
  if (!checked.length) return { decision: "allow", text: "", checked, outside: [], autoLeased: [], answers: [] };
  const agent = store.actor.agent;
  const read = await loadLeasesFor(store, { paths: checked, agent });
  const ctx = await checkContext(store);
  const stale = ctx.stale;
  const r = checkPaths(checked, read.set.leases, ctx);
  const named = r.answers.filter((a) => a.holders.some((h) => h.exclusive && h.agent !== agent));
  const lines = named.map((a) => {
    const h = a.holders.find((x) => x.exclusive && x.agent !== agent)!;
    const until = h.grace_until ? `until ${h.grace_until} (expired at ${h.expires_at} by this clock, it stands for the takeover grace)` : `until ${h.expires_at}`;
    return `git-handoff warn: this command names ${a.path}, inside an exclusive lease on ${h.pattern} held by ${h.agent}${h.task ? ` (task ${h.task})` : ""} ${until}: do not change it (reading is fine); ask ${h.agent} first`;
  });
  const unknown = stale ? r.answers.filter((a) => a.verdict !== "ok" && !named.includes(a)) : [];
  if (unknown.length) lines.push(`git-handoff warn: this command names ${unknown.map((a) => a.path).join(", ")}, which may be leased by another agent: ${stale}`);
  const answers = [...named, ...unknown].map((a) => ({ ...a, verdict: "warn" as const }));
  return { decision: "allow", text: lines.join("\n"), checked, outside: [], autoLeased: [], answers };
}
