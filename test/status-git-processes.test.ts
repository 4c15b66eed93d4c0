// What `status` asks git for, counted with GIT_TRACE. With agents whose worktrees are not on this
// machine, a second status starts no git process at all: branch tips are read in-process and
// their commit times kept by commit id; the machine name (`git config`) is asked only when an
// agent's worktree is here to look into (drift.test.ts covers that). A branch that moves is seen.
import { readFileSync } from "node:fs";
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
