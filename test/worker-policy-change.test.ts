// A running worker follows the repository's policy as it is committed: a change merged on the
// integration branch while the worker runs in another worktree applies to the next task it takes,
// as it does for a running MCP server (mcp-policy-change.test.ts). It kept the policy it started
// with for its whole life: here claim_ttl goes from 10m to 2h, and the worker's next claim was
// still for 10 minutes.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, cleanupTemp, cli, gitOut, repoWithPolicy, tempDir } from "./support/repo.ts";
import { script, start, stop, until } from "./support/handover.ts";

test.after(cleanupTemp);

test("a policy committed to the integration branch while a worker runs applies to its next claim", async () => {
  const { repo, worktree } = repoWithPolicy("claim_ttl: 10m\n");
  const seen = tempDir("handoff-worker-seen-");
  // Each task's command records the task as the worker holds it while the command runs.
  const job = script(`"${process.execPath}" "${CLI}" task show "$HANDOFF_TASK_ID" --json > "${seen}/$HANDOFF_TASK_ID.json"`);
  const w = start(["worker", "--exec", job, "--poll", "100ms"], { cwd: worktree, agent: "w1" });
  const claimTtl = (id: string) => JSON.parse(readFileSync(join(seen, `${id}.json`), "utf8")).claim.ttl_ms as number;
  try {
    assert.is(cli(["task", "add", "first", "--id", "t1"], { cwd: repo, agent: "lead" }).code, 0);
    await until(() => /t1: done/.test(w.stderr()), "t1 done", 60_000);
    assert.is(claimTtl("t1"), 10 * 60_000);

    // Merged on main from the main worktree; the worker's worktree and its file are untouched.
    writeFileSync(join(repo, ".handoff.yaml"), "claim_ttl: 2h\n");
    gitOut(repo, "commit", "-q", "-am", "policy: longer claims");
    assert.is(cli(["task", "add", "second", "--id", "t2"], { cwd: repo, agent: "lead" }).code, 0);
    await until(() => /t2: (done|failed)/.test(w.stderr()), "t2 finished", 60_000);
    assert.ok(existsSync(join(seen, "t2.json")), w.stderr());
    assert.is(claimTtl("t2"), 2 * 3_600_000, "the claim follows the policy on the integration branch");

    // A policy that does not parse, merged meanwhile: the worker says so and goes on under the last
    // one that does (as every command does), rather than stopping or acting on no policy at all.
    writeFileSync(join(repo, ".handoff.yaml"), "claim_ttl: [\n");
    gitOut(repo, "commit", "-q", "-am", "policy: broken");
    assert.is(cli(["task", "add", "third", "--id", "t3"], { cwd: repo, agent: "lead" }).code, 0);
    await until(() => /t3: (done|failed)/.test(w.stderr()), "t3 finished", 60_000);
    assert.match(w.stderr(), /\.handoff\.yaml at main \([0-9a-f]+\) does not parse/);
    assert.is(claimTtl("t3"), 2 * 3_600_000, "the last policy that parses");
  } finally {
    await stop(w);
  }
});

test.run();
