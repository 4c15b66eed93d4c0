// The repository the dashboard tests look at: three agents in linked worktrees (alice, bob,
// carol) plus dave, gone silent while holding a claim; tasks in every status, a dependency that
// blocks and one that no longer does, a handoff, two reviews with verification output, an
// exclusive lease and a lease of a finished task, branches that conflict, and a ref the remote
// has that was never applied here (quarantined).
import { join } from "node:path";
import { cli, gitOut, tempDir, type CliResult } from "./repo.ts";
import { commitFile, team, type Team } from "./team.ts";
import { storeCancel, storeClaim, storeDone, storeLease, storeSession, storeTasks, type Actor, type TaskSeed } from "./seed.ts";

export const EVIL = "evil <script>window.__pwned=1</script> \x1b[31mred\x1b[0m";

export interface DashboardFixture extends Team {
  ids: Record<string, string>;
  origin: string;
}

function ok(r: CliResult, what: string): CliResult {
  if (r.code !== 0) throw new Error(`${what} failed (${r.code}): ${r.stderr}`);
  return r;
}

/**
 * The records are written through the store (seed.ts) where the dashboard only reads them; the
 * refused duplicate claim, the verifying dones, the handoff, the failure and the sync stay CLI processes.
 */
export async function dashboardFixture(): Promise<DashboardFixture> {
  const t = team(["alice", "bob", "carol"]);
  const origin = join(tempDir("handoff-origin-"), "origin.git");
  gitOut(t.repo, "init", "-q", "--bare", origin);
  gitOut(t.repo, "remote", "add", "origin", origin);
  const as = (agent: string, args: string[], env?: NodeJS.ProcessEnv) => ok(t.as(agent, args, env), `${agent}: ${args.join(" ")}`);
  /** Where `t.as(agent, ...)` runs (the agent's worktree, else the main one), at `now`. */
  const by = (agent: string, now?: string): Actor => ({ cwd: t.wt[agent] ?? t.repo, agent, ...(now ? { now } : {}) });
  const ids: Record<string, string> = {};
  const add = async (key: string, task: TaskSeed, now?: string) => {
    await storeTasks(by("lead", now), [task]);
    ids[key] = task.id;
  };

  await storeSession(by("alice"), "build the api");
  await storeSession(by("bob"), "api client", { awaits: "api from alice" });
  await storeSession(by("carol"), "tests and review");
  // dave claimed something two hours ago and has been silent since: disconnected, claim still live.
  const past = new Date(Date.now() - 2 * 3_600_000).toISOString();
  await storeSession({ cwd: t.repo, agent: "dave", now: past }, "went home");

  await add("todo", { id: "docs", objective: "write the docs", priority: 2 });
  await add("claimed", { id: "api", objective: "build the api", scope: ["src/api/**"], exclusive: true });
  await add("blocked", { id: "client", objective: "api client", after: ["api"] });
  await add("donedep", { id: "schema", objective: "the schema" });
  await add("ready", { id: "migrate", objective: "migrate data", after: ["schema"] });
  await add("review", { id: "checks", objective: "make checks pass", verify: "echo checking build; echo all 3 tests passed" });
  await add("review2", { id: "lint", objective: "lint the tree", verify: "echo lint clean" });
  await add("failed", { id: "perf", objective: "speed it up" });
  await add("cancelled", { id: "old", objective: "obsolete idea" });
  // Added before dave claimed it (a task is never changed at a time before its last change).
  await add("stale", { id: "night", objective: "overnight job" }, past);
  await add("evil", { id: "evil", objective: EVIL });

  await storeClaim(by("bob"), "api", { ttl: "2h" });
  // A duplicate claim, refused and logged: the stats count it.
  if (t.as("alice", ["claim", "api"]).code !== 3) throw new Error("alice's duplicate claim of api was not refused");
  await storeLease(by("bob"), ["src/api/routes.ts"], { exclusive: true, task: "api" });
  await storeClaim(by("alice"), "schema");
  commitFile(t.wt.alice!, "schema.sql", "create table t (id int);\n");
  // A lease whose task is finished (left by an older build or a merge: `done` ends it, and
  // `lease --task` refuses a finished task): the dashboard flags it and may force-release it.
  await storeLease(by("alice"), ["docs/schema.md"], { task: "schema" });
  const leasesTip = gitOut(t.repo, "rev-parse", "refs/handoff/leases");
  await storeDone(by("alice"), "schema");
  as("alice", ["handoff", "schema", "--to", "bob", "--note", "schema is in schema.sql"]);
  // Any write on the task ends its leases again: the lease set is put back after the last one.
  gitOut(t.repo, "update-ref", "refs/handoff/leases", leasesTip, gitOut(t.repo, "rev-parse", "refs/handoff/leases"));
  await storeClaim(by("carol"), "checks");
  commitFile(t.wt.carol!, "checks.txt", "ok\n");
  as("carol", ["done", "checks"]);
  await storeClaim(by("carol"), "lint");
  as("carol", ["done", "lint"]);
  await storeClaim(by("alice"), "perf");
  as("alice", ["fail", "perf", "--reason", "needs profiling first"]);
  await storeCancel(by("lead"), "old", "superseded");
  await storeClaim({ cwd: t.repo, agent: "dave", now: past }, "night", { ttl: "1d" });

  // Two branches that will not merge cleanly.
  commitFile(t.wt.alice!, "shared.txt", "line 1 by alice\nline 2\nline 3\n");
  commitFile(t.wt.bob!, "shared.txt", "line 1 by bob\nline 2\nline 3\n");

  // A ref the remote has and this clone never applied: a sync refuses it on receive (exit 3,
  // quarantined), keeps it in the tracking refs only and lists it with its reason and repair.
  const tree = gitOut(t.repo, "mktree");
  const forged = gitOut(t.repo, "commit-tree", tree, "-m", "forged");
  gitOut(t.repo, "push", "-q", origin, `${forged}:refs/handoff/tasks/forged`);
  const synced = cli(["sync"], { cwd: t.repo, agent: "lead" });
  if (synced.code !== 3 || !/refused on receive: refs\/handoff\/tasks\/forged/.test(synced.stdout)) throw new Error(`sync: exit ${synced.code}: ${synced.stdout}${synced.stderr}`);
  return { ...t, ids, origin };
}
