// What `status` asks git for, counted with GIT_TRACE: over 1,000-odd refs with agents whose
// worktrees are not on this machine, one process (the branch tips); the machine name (`git
// config`) is asked only when an agent's worktree is here to look into (drift.test.ts covers that).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, tempDir, tempRepo } from "./support/repo.ts";
import { fixtureNow, writeViewsFixture } from "./support/views-fixture.ts";

test.after(cleanupTemp);

test("status starts one git process when no agent's worktree is on this machine", () => {
  const repo = tempRepo();
  const f = { tasks: 300, agents: 10, events: 600, branches: 3 };
  writeViewsFixture(repo, f);
  const env = { HANDOFF_NOW: fixtureNow(f) };
  const first = cli(["status", "--json"], { cwd: repo, agent: "agent-000", env });
  assert.is(first.code, 0, first.stderr);
  assert.ok(first.json.drift, "drift was computed");
  const trace = join(tempDir("handoff-trace-"), "trace");
  const r = cli(["status"], { cwd: repo, agent: "agent-000", env: { ...env, GIT_TRACE: trace } });
  assert.is(r.code, 0, r.stderr);
  const commands = readFileSync(trace, "utf8").split("\n").filter((l) => l.includes("trace: built-in: git ")).map((l) => l.split("trace: built-in: ")[1]!.split(" ").slice(0, 2).join(" "));
  assert.equal(commands, ["git for-each-ref"]);
});

test.run();
