// What `status` asks git for, counted with GIT_TRACE. With agents whose worktrees are not on this
// machine, a second status starts no git process at all: branch tips are read in-process and
// their commit times kept by commit id; the machine name (`git config`) is asked only when an
// agent's worktree is here to look into (drift.test.ts covers that). A branch that moves is seen.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, sh, tempDir, tempRepo } from "./support/repo.ts";
import { fixtureNow, writeViewsFixture } from "./support/views-fixture.ts";

test.after(cleanupTemp);

function traced(repo: string, env: NodeJS.ProcessEnv, args: string[]): { json: any; commands: string[] } {
  const trace = join(tempDir("handoff-trace-"), "trace");
  const r = cli(args, { cwd: repo, agent: "agent-000", env: { ...env, GIT_TRACE: trace } });
  assert.is(r.code, 0, r.stderr);
  let text = "";
  try {
    text = readFileSync(trace, "utf8");
  } catch {
    /* no git process at all */
  }
  return { json: r.json, commands: text.split("\n").filter((l) => l.includes("trace: built-in: git ")).map((l) => l.split("trace: built-in: ")[1]!.split(" ").slice(0, 2).join(" ")) };
}

test("a second status starts no git process when no agent's worktree is on this machine; a moved branch is seen", () => {
  const repo = tempRepo();
  const f = { tasks: 300, agents: 10, events: 12_000, branches: 3 };
  writeViewsFixture(repo, f);
  const env = { HANDOFF_NOW: fixtureNow(f) };
  const stuckOn = (json: any, branch: string) => json.drift.stuck.filter((s: { branch: string }) => s.branch === branch).length;
  const first = cli(["status", "--json"], { cwd: repo, agent: "agent-000", env });
  assert.is(first.code, 0, first.stderr);
  assert.ok(stuckOn(first.json, "agent-001") > 0, "the fixture's agent-001 looks stuck");
  assert.equal(traced(repo, env, ["status"]).commands, []);
  // agent-001's branch moves a minute before now: its claims no longer look stuck.
  const at = Math.floor(Date.parse(fixtureNow(f)) / 1000) - 60;
  const tree = gitOut(repo, "rev-parse", "agent-001^{tree}");
  const commit = sh("git", ["commit-tree", tree, "-p", "agent-001", "-m", "more work"], repo, { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t", GIT_COMMITTER_DATE: `${at} +0000`, GIT_AUTHOR_DATE: `${at} +0000` }).trim();
  gitOut(repo, "update-ref", "refs/heads/agent-001", commit);
  const moved = traced(repo, env, ["status", "--json"]).json;
  assert.is(stuckOn(moved, "agent-001"), 0);
  assert.ok(stuckOn(moved, "agent-002") > 0, "other branches are as they were");
});

test("the merge preview's file: a moved branch merges only its own pairs, the file keeps the current pairs, a status with nothing moved leaves it alone", () => {
  const repo = tempRepo();
  const f = { tasks: 300, agents: 10, events: 1_000, branches: 4 };
  writeViewsFixture(repo, f);
  const env = { HANDOFF_NOW: fixtureNow(f) };
  const file = join(repo, ".git", "handoff", "merge-preview.json");
  const pairsIn = () => Object.keys(JSON.parse(readFileSync(file, "utf8")).pairs).sort();
  const merges = (r: { commands: string[] }) => r.commands.filter((c) => c === "git merge-tree").length;
  const first = traced(repo, env, ["status", "--json"]);
  const all = Number(/across (\d+) branch pairs/.exec(first.json.predicted_conflicts.summary)?.[1]);
  assert.is(all, 10, `four branches and main merged pairwise: ${first.json.predicted_conflicts.summary}`);
  assert.is(merges(first), all, "every pair merged once");
  const before = pairsIn();
  assert.is(before.length, all);
  // agent-001's branch moves: only the pairs it is in are merged again, and the file drops the old ones.
  const old = gitOut(repo, "rev-parse", "agent-001").trim();
  const tree = gitOut(repo, "rev-parse", "agent-001^{tree}");
  const commit = sh("git", ["commit-tree", tree, "-p", "agent-001", "-m", "more work"], repo, { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" }).trim();
  gitOut(repo, "update-ref", "refs/heads/agent-001", commit);
  const moved = traced(repo, env, ["status", "--json"]);
  const withIt = 4; // with the three other branches and with main
  assert.is(merges(moved), withIt, "only the moved branch's pairs merged again");
  const after = pairsIn();
  assert.is(after.length, all, "one entry per current pair");
  assert.not.ok(after.some((k) => k.includes(old)), "the old tip's pairs are gone");
  assert.is(after.filter((k) => k.includes(commit)).length, withIt);
  assert.is(after.filter((k) => before.includes(k)).length, all - withIt, "the others kept as they were");
  // Nothing moved: no merge and the file is not written again.
  const text = readFileSync(file, "utf8");
  const stamp = statSync(file).mtimeMs;
  const still = traced(repo, env, ["status", "--json"]);
  assert.is(merges(still), 0);
  assert.equal(still.json.predicted_conflicts, moved.json.predicted_conflicts, "the same preview from the file");
  assert.is(readFileSync(file, "utf8"), text);
  assert.is(statSync(file).mtimeMs, stamp, "not written again");
});

test("events --agent and stats by an agent with a session start no git process once their caches are warm", () => {
  const repo = tempRepo();
  const f = { tasks: 300, agents: 10, events: 600, branches: 3 };
  writeViewsFixture(repo, f);
  const env = { HANDOFF_NOW: fixtureNow(f) };
  for (const args of [["events", "--agent", "agent-007", "--limit", "20"], ["stats"]]) {
    const warm = cli(args, { cwd: repo, agent: "agent-000", env });
    assert.is(warm.code, 0, warm.stderr);
    assert.equal(traced(repo, env, args).commands, [], args.join(" "));
  }
});

test.run();
