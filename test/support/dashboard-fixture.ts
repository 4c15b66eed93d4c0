// The repository the dashboard tests look at: three agents in linked worktrees (alice, bob,
// carol) plus dave, gone silent while holding a claim; tasks in every status, a dependency that
// blocks and one that no longer does, a handoff, two reviews with verification output, an
// exclusive lease and a lease of a finished task, branches that conflict, and a ref the remote
// has that was never applied here (quarantined).
import { join } from "node:path";
import { cli, gitOut, tempDir, type CliResult } from "./repo.ts";
import { commitFile, team, type Team } from "./team.ts";

export const EVIL = "evil <script>window.__pwned=1</script> \x1b[31mred\x1b[0m";

export interface DashboardFixture extends Team {
  ids: Record<string, string>;
  origin: string;
}

function ok(r: CliResult, what: string): CliResult {
  if (r.code !== 0) throw new Error(`${what} failed (${r.code}): ${r.stderr}`);
  return r;
}

export function dashboardFixture(): DashboardFixture {
  const t = team(["alice", "bob", "carol"]);
  const origin = join(tempDir("handoff-origin-"), "origin.git");
  gitOut(t.repo, "init", "-q", "--bare", origin);
  gitOut(t.repo, "remote", "add", "origin", origin);
  const lead = (args: string[], env?: NodeJS.ProcessEnv) => ok(cli(args, { cwd: t.repo, agent: "lead", ...(env ? { env } : {}) }), args.join(" "));
  const as = (agent: string, args: string[], env?: NodeJS.ProcessEnv) => ok(t.as(agent, args, env), `${agent}: ${args.join(" ")}`);
  const add = (id: string, objective: string, extra: string[] = [], env?: NodeJS.ProcessEnv) => lead(["task", "add", "--id", id, ...extra, "--", objective], env).stdout.trim();

  as("alice", ["session", "start", "--objective", "build the api"]);
  as("bob", ["session", "start", "--objective", "api client", "--awaits", "api from alice"]);
  as("carol", ["session", "start", "--objective", "tests and review"]);
  // dave claimed something two hours ago and has been silent since: disconnected, claim still live.
  const past = new Date(Date.now() - 2 * 3_600_000).toISOString();
  lead(["--agent", "dave", "session", "start", "--objective", "went home"], { HANDOFF_NOW: past });

  const ids: Record<string, string> = {};
  ids.todo = add("docs", "write the docs", ["--priority", "2"]);
  ids.claimed = add("api", "build the api", ["--scope", "src/api/**", "--exclusive"]);
  ids.blocked = add("client", "api client", ["--after", "api"]);
  ids.donedep = add("schema", "the schema");
  ids.ready = add("migrate", "migrate data", ["--after", "schema"]);
  ids.review = add("checks", "make checks pass", ["--verify", "echo checking build; echo all 3 tests passed"]);
  ids.review2 = add("lint", "lint the tree", ["--verify", "echo lint clean"]);
  ids.failed = add("perf", "speed it up");
  ids.cancelled = add("old", "obsolete idea");
  // Added before dave claimed it (a task is never changed at a time before its last change).
  ids.stale = add("night", "overnight job", [], { HANDOFF_NOW: past });
  ids.evil = add("evil", EVIL);

  as("bob", ["claim", "api", "--ttl", "2h"]);
  // A duplicate claim, refused and logged: the stats count it.
  if (t.as("alice", ["claim", "api"]).code !== 3) throw new Error("alice's duplicate claim of api was not refused");
  as("bob", ["lease", "--exclusive", "--task", "api", "src/api/routes.ts"]);
  as("alice", ["claim", "schema"]);
  commitFile(t.wt.alice!, "schema.sql", "create table t (id int);\n");
  // A lease whose task is finished (left by an older build or a merge: `done` ends it, and
  // `lease --task` refuses a finished task): the dashboard flags it and may force-release it.
  as("alice", ["lease", "--task", "schema", "docs/schema.md"]);
  const leasesTip = gitOut(t.repo, "rev-parse", "refs/handoff/leases");
  as("alice", ["done", "schema", "--no-verify"]);
  as("alice", ["handoff", "schema", "--to", "bob", "--note", "schema is in schema.sql"]);
  // Any write on the task ends its leases again: the lease set is put back after the last one.
  gitOut(t.repo, "update-ref", "refs/handoff/leases", leasesTip, gitOut(t.repo, "rev-parse", "refs/handoff/leases"));
  as("carol", ["claim", "checks"]);
  commitFile(t.wt.carol!, "checks.txt", "ok\n");
  as("carol", ["done", "checks"]);
  as("carol", ["claim", "lint"]);
  as("carol", ["done", "lint"]);
  as("alice", ["claim", "perf"]);
  as("alice", ["fail", "perf", "--reason", "needs profiling first"]);
  lead(["cancel", "old", "--reason", "superseded"]);
  lead(["--agent", "dave", "claim", "night", "--ttl", "1d"], { HANDOFF_NOW: past });

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
