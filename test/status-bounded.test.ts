// `status` at scale: the text view cuts long sections and says how many lines it left out
// (`--all` shows them, `--json` is always complete), and the merge preview is served from a cache
// keyed by the branch tips it merged, re-merging only a branch that moved.
import { spawnSync } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { fixtureNow, writeViewsFixture, type ViewsFixture } from "./support/views-fixture.ts";

test.after(cleanupTemp);

function busy(f: ViewsFixture) {
  const repo = tempRepo();
  writeViewsFixture(repo, f);
  const run = (...args: string[]) => {
    const r = cli(["status", ...args], { cwd: repo, agent: "agent-000", env: { HANDOFF_NOW: fixtureNow(f) } });
    assert.is(r.code, 0, r.stderr);
    return r;
  };
  return { repo, run };
}

test("long sections show their first lines and count the rest; --all and --json show everything", () => {
  const { run } = busy({ tasks: 120, agents: 30, events: 240 });
  const text = run("--no-conflicts").stdout;
  const all = run("--no-conflicts", "--all").stdout;
  const json = run("--no-conflicts", "--json").json;
  const rows = json.matrix.rows.length;
  assert.is(rows, 90, "every open task in the JSON matrix (3 of each 4 tasks are open)");
  assert.is(json.matrix.agents.length, 30);
  // held: 60 claimed tasks, one line each; 20 shown, 40 counted.
  assert.match(text, /\n {2}… 40 more lines \(git handoff status --all shows everything\)\nagents\n/);
  // agents: 30 lines, 20 shown.
  assert.match(text, /\n {2}… 10 more lines \(git handoff status --all shows everything\)\nclaims /);
  // the matrix: the first rows and the agents marked in them, then counts.
  assert.match(text, /\n {2}… 73 more tasks\n/);
  assert.match(text, /\n {2}… \d+ more agents\n/);
  assert.ok(text.split("\n").length < 140, `bounded: ${text.split("\n").length} lines`);
  assert.not.match(all, /more lines \(git handoff status --all/);
  for (const r of json.matrix.rows) assert.ok(all.includes(`  ${r.task}  `), `--all lists ${r.task}`);
  assert.ok(!text.includes("t-00118"), "the last task is cut from the short view");
  assert.ok(all.includes("t-00118"));
});

test("a small repository's status is not cut at all", () => {
  const { run } = busy({ tasks: 8, agents: 3, events: 16 });
  const text = run("--no-conflicts").stdout;
  assert.not.match(text, /more lines|more tasks|more agents/);
  assert.is(text, run("--no-conflicts", "--all").stdout);
});

test("the merge preview comes from the cache keyed by branch tips; a moved branch is merged again", () => {
  const { repo, run } = busy({ tasks: 10, agents: 6, events: 20, branches: 6 });
  const first = run("--json").json.predicted_conflicts;
  // agent-000 and agent-005 both change src/shared.ts.
  assert.is(first.conflicting, 1, JSON.stringify(first));
  const file = join(repo, ".git/handoff/merge-preview.json");
  const cached = JSON.parse(readFileSync(file, "utf8"));
  // 6 agent branches pairwise, and each against the integration branch (main).
  assert.is(Object.keys(cached.pairs).length, 15 + 6, "one entry per pair of tips merged");
  // A poisoned entry proves the second run reads the cache instead of merging.
  const key = Object.keys(cached.pairs).find((k) => cached.pairs[k].length === 0)!;
  cached.pairs[key] = ["from-the-cache.txt"];
  writeFileSync(file, JSON.stringify(cached));
  const written = statSync(file);
  const second = run("--json").json.predicted_conflicts;
  assert.is(second.conflicting, 2);
  assert.ok(second.pairs.some((p: any) => p.conflicts.includes("from-the-cache.txt")));
  // Nothing merged anew: the file is not written again (the same file, untouched).
  const after = statSync(file);
  assert.equal([after.ino, after.mtimeMs, after.size], [written.ino, written.mtimeMs, written.size], "a run that merged nothing new leaves the cache file as it was");
  // agent-001 moves: its pairs are merged again (it now conflicts with agent-000 too).
  const base = gitOut(repo, "rev-parse", "agent-001");
  writeFileSync(join(repo, "shared-change.txt"), "agent-001 changes the shared line\n");
  const shared = gitOut(repo, "hash-object", "-w", join(repo, "shared-change.txt"));
  gitOut(repo, "read-tree", "--index-output=.git/alt-index", base);
  const env = { GIT_INDEX_FILE: join(repo, ".git/alt-index") };
  const sh = (args: string[]) => gitOutEnv(repo, env, args);
  sh(["update-index", "--add", "--cacheinfo", `100644,${shared},src/shared.ts`]);
  const newTree = sh(["write-tree"]);
  const moved = gitOut(repo, "commit-tree", newTree, "-p", base, "-m", "agent-001 changes shared");
  gitOut(repo, "update-ref", "refs/heads/agent-001", moved, base);
  const third = run("--json").json.predicted_conflicts;
  const withOne = third.pairs.filter((p: any) => p.conflicts.includes("src/shared.ts") && (p.a.branch === "agent-001" || p.b.branch === "agent-001"));
  assert.ok(withOne.length >= 2, JSON.stringify(third.pairs.map((p: any) => [p.a.branch, p.b.branch, p.conflicts])));
  // A damaged cache file is only a slower preview: every pair merged again, the poison gone.
  writeFileSync(file, "{torn");
  const fourth = run("--json").json.predicted_conflicts;
  assert.ok(!JSON.stringify(fourth).includes("from-the-cache.txt"));
  assert.is(Object.keys(JSON.parse(readFileSync(file, "utf8")).pairs).length, 21);
  assert.equal(run("--json").json.predicted_conflicts, fourth);
});

function gitOutEnv(cwd: string, env: Record<string, string>, args: string[]): string {
  const r = spawnSync("git", args, { cwd, env: { ...process.env, ...env }, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}

test.run();
