// The report's figures, recounted from the repository after a run: the agents' commits (each names
// its task, attempt and start), main's history, real merges (`git merge-tree`) and real test runs.
// Nothing here reads the simulator's own bookkeeping except what only it can know: how long the
// coordination calls took and how long agents waited.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VERIFY, type WorkTask } from "./workload.ts";
import { START, type World } from "./world.ts";

export interface Figures {
  tasks_merged: number;
  tasks_done_twice: number;
  owned_file_edits: number;
  integration_conflicts: number;
  dependent_work_redone: number;
  handoffs_delivered: number;
  handoff_deliveries: number;
  verification_failures_before_merge: number;
  verification_failures_after_merge: number;
  scripted_minutes: number;
  agent_minutes_waiting: number;
  coordination_calls: number;
  coordination_ms: number;
  wall_ms: number;
}

interface AttemptCommit {
  oid: string;
  author: string;
  time: number;
  task: string;
  attempt: number;
  started: number;
  files: string[];
}

function git(repo: string, args: string[]): { code: number; out: string } {
  const r = spawnSync("git", args, { cwd: repo, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, env: { ...process.env, GIT_DIR: undefined, GIT_WORK_TREE: undefined } });
  return { code: r.status ?? 1, out: r.stdout ?? "" };
}

export function attempts(repo: string): AttemptCommit[] {
  const out = git(repo, ["log", "--branches", "--format=%x1e%H%x1f%an%x1f%ct%x1f%B%x1f", "--name-only"]).out;
  const list: AttemptCommit[] = [];
  for (const rec of out.split("\x1e").slice(1)) {
    const [oid, author, time, body, names] = rec.split("\x1f");
    const task = /^Task: (\S+)$/m.exec(body ?? "")?.[1];
    if (!task) continue;
    list.push({
      oid: oid!,
      author: author!,
      time: Number(time) * 1000,
      task,
      attempt: Number(/^Attempt: (\d+)$/m.exec(body!)?.[1] ?? 1),
      started: Date.parse(/^Started: (\S+)$/m.exec(body!)?.[1] ?? ""),
      files: (names ?? "").split("\n").filter(Boolean),
    });
  }
  return list;
}

/** main's first-parent history, oldest first, and for each merge the attempt it brought in. */
function mainline(repo: string): { oid: string; time: number; merged: string | null }[] {
  const out = git(repo, ["log", "--first-parent", "--reverse", "--format=%H %ct %P", "main"]).out.trim();
  return out.split("\n").map((l) => {
    const [oid, t, , second] = l.split(" ");
    return { oid: oid!, time: Number(t) * 1000, merged: second ?? null };
  });
}

function conflicts(repo: string, a: string, b: string): boolean {
  return git(repo, ["merge-tree", "--write-tree", "--no-messages", a, b]).code === 1;
}

const verdicts = new Map<string, boolean>();

/** Runs the tests at a commit in a throwaway worktree: the verdict git's content gives, nothing else. */
function testsPass(repo: string, oid: string): boolean {
  // The same tree gives the same verdict: run the tests once per distinct tree.
  const tree = git(repo, ["rev-parse", `${oid}^{tree}`]).out.trim();
  const known = verdicts.get(tree);
  if (known !== undefined) return known;
  const verdict = runTests(repo, oid);
  verdicts.set(tree, verdict);
  return verdict;
}

function runTests(repo: string, oid: string): boolean {
  const dir = mkdtempSync(join(tmpdir(), "handoff-compare-verify-"));
  try {
    if (git(repo, ["worktree", "add", "-q", "--detach", join(dir, "wt"), oid]).code !== 0) throw new Error(`cannot check out ${oid}`);
    return spawnSync("sh", ["-c", VERIFY], { cwd: join(dir, "wt"), encoding: "utf8" }).status === 0;
  } finally {
    git(repo, ["worktree", "remove", "--force", join(dir, "wt")]);
    rmSync(dir, { recursive: true, force: true });
  }
}

export function measure(w: World, tasks: WorkTask[], wallMs: number): Figures {
  const repo = w.repo;
  const all = attempts(repo);
  const main = mainline(repo);
  const mergedAt = new Map<string, number>();
  const mergedOids = new Set<string>();
  for (const m of main) {
    const a = m.merged ? all.find((x) => x.oid === m.merged) : undefined;
    if (a && !mergedAt.has(a.task)) mergedAt.set(a.task, m.time);
    if (a) mergedOids.add(a.oid);
  }
  const unmerged = all.filter((a) => !mergedOids.has(a.oid));

  const authors = new Map<string, Set<string>>();
  for (const a of all) (authors.get(a.task) ?? authors.set(a.task, new Set()).get(a.task)!).add(a.author);
  const doneTwice = [...authors.values()].filter((s) => s.size > 1).length;

  // The owner of a task is whoever started it first; its files are theirs until it lands on main.
  const owner = new Map<string, AttemptCommit>();
  for (const a of [...all].sort((x, y) => x.started - y.started)) if (!owner.has(a.task)) owner.set(a.task, a);
  let owned = 0;
  for (const c of all) {
    for (const f of c.files) {
      const holders = tasks.filter((t) => t.scope.includes(f) && owner.get(t.id) && owner.get(t.id)!.author !== c.author);
      if (holders.some((t) => c.time > owner.get(t.id)!.started && c.started < (mergedAt.get(t.id) ?? Infinity))) owned++;
    }
  }

  const mainAt = (t: number) => [...main].reverse().find((m) => m.time <= t) ?? main[0]!;
  const conflicted = unmerged.filter((a) => conflicts(repo, mainAt(a.time).oid, a.oid));
  const after = new Map(tasks.map((t) => [t.id, t.after]));
  const redone = unmerged.filter((a) => mergedAt.has(a.task) && (after.get(a.task) ?? []).some((d) => a.started < (mergedAt.get(d) ?? Infinity))).length;

  const testedBefore = unmerged.filter((a) => !conflicted.includes(a) && !testsPass(repo, a.oid)).length;
  const afterMerge = main.filter((m) => m.merged && !testsPass(repo, m.oid)).length;

  const records = taskRecords(repo);
  const handoffs = records.flatMap((r) => (r.handoffs ?? []).map((h) => ({ ...h, task: r.id })));
  // A handoff reached its consumer when the consumer acked it, or when the consumer is its producer.
  const claimers = (id: string) => new Set([...git(repo, ["log", "--format=%s", `refs/handoff/tasks/${id}`]).out.matchAll(/^claimed \S+ by (\S+) /gm)].map((m) => m[1]!));
  const reached = handoffs.filter((h) => h.acked_by.length > 0 || records.some((r) => r.id !== undefined && (r.after ?? []).includes(h.task!) && claimers(r.id).has(h.producer)));
  const verifyFailures = records.length ? failedVerifications(repo) : 0;

  const last = main[main.length - 1]!.time;
  return {
    tasks_merged: mergedAt.size,
    tasks_done_twice: doneTwice,
    owned_file_edits: owned,
    integration_conflicts: conflicted.length,
    dependent_work_redone: redone,
    handoffs_delivered: reached.length,
    handoff_deliveries: handoffs.reduce((n, h) => n + h.acked_by.length, 0),
    verification_failures_before_merge: testedBefore + verifyFailures,
    verification_failures_after_merge: afterMerge,
    scripted_minutes: Math.round((last - START) / 60_000),
    agent_minutes_waiting: Math.round(w.waitedMs / 60_000),
    coordination_calls: w.cliCalls,
    coordination_ms: Math.round(w.cliMs),
    wall_ms: Math.round(wallMs),
  };
}

interface TaskRecord {
  id?: string;
  after?: string[];
  handoffs?: { acked_by: unknown[]; producer: string }[];
}

function taskRecords(repo: string): TaskRecord[] {
  const refs = git(repo, ["for-each-ref", "--format=%(refname)", "refs/handoff/tasks/"]).out.split("\n").filter(Boolean);
  return refs.map((r) => JSON.parse(git(repo, ["show", `${r}:task.json`]).out) as TaskRecord);
}

/** Verifications that failed before review: the `verified` events of each task's history. */
function failedVerifications(repo: string): number {
  const log = git(repo, ["log", "--format=%B%x1e", "--glob=refs/handoff/tasks/*"]).out;
  return log.split("\x1e").filter((m) => /"type": "verified"/.test(m) && /"passed": false/.test(m)).length;
}
