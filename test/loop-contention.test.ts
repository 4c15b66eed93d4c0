// Two hands on the same work: a second `loop run` while one runs is refused, and a task someone
// else claims before its unit starts keeps its claim (the unit is refused, never run twice).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut } from "./support/repo.ts";
import { processAlive } from "../src/git/process-alive.ts";
import { linkedWorktrees, loopRecord, loopRepo, taskStatus } from "./support/loop.ts";
import { start, until } from "./support/handover.ts";

test.after(cleanupTemp);

test("a second loop run while one runs is refused with who runs it; the first goes on", async () => {
  const l = await loopRepo([{ id: "slow", objective: "write slow.txt", scope: ["slow.txt"] }]);
  const gate = join(l.dir, "gate");
  const first = start(["loop", "run", "--agent-cmd", l.agent, "--poll", "100ms"], { cwd: l.repo, agent: "lead", env: { ...l.env, LOOP_TEST_GATE: gate } });
  await until(() => l.starts().length === 1, "the agent to start");
  const again = cli(["loop", "run", "--agent-cmd", l.agent, "--json"], { cwd: l.repo, agent: "lead", env: l.env });
  assert.is(again.code, 3, again.stderr);
  assert.is(again.json.error.code, "held_by_other");
  assert.match(again.json.error.message, `is running (pid ${first.child.pid})`);
  writeFileSync(gate, "");
  assert.is(await first.exited, 0, first.stderr());
  assert.is(l.starts().length, 1);
  assert.is(taskStatus(l.repo, "slow"), "done");
});

test("a task someone claims before its unit starts: the unit is refused, not run, and their claim stands", async () => {
  const l = await loopRepo([
    { id: "one", objective: "write one.txt", scope: ["one.txt"] },
    { id: "two", objective: "write two.txt", scope: ["two.txt"] },
  ]);
  const gate = join(l.dir, "gate");
  const run = start(["loop", "run", "--agent-cmd", l.agent, "--max-worktrees", "1", "--poll", "100ms", "--json"], { cwd: l.repo, agent: "lead", env: { ...l.env, LOOP_TEST_GATE: gate } });
  await until(() => l.starts().length === 1, "u1's agent to start");
  assert.is(cli(["claim", "two"], { cwd: l.repo, agent: "bob" }).code, 0);
  writeFileSync(gate, "");
  assert.is(await run.exited, 3, run.stderr());
  const [u1, u2] = JSON.parse(run.stdout()).units;
  assert.is(u1.phase, "merged");
  assert.is(u2.phase, "refused");
  assert.match(u2.note, "could not claim its tasks");
  assert.match(u2.note, "bob");
  assert.equal(l.starts().map((s) => s.unit), ["u1"]);
  assert.equal(linkedWorktrees(l.repo), [], "the refused unit's worktree is removed");
  assert.is(gitOut(l.repo, "branch", "--list", u2.branch), "");
  const two = JSON.parse(gitOut(l.repo, "show", "refs/handoff/tasks/two:task.json"));
  assert.equal([two.status, two.claim.agent], ["claimed", "bob"]);
});

test("an agent past --unit-timeout is stopped, its claim released, and it is not started again (scripted clock)", async () => {
  const l = await loopRepo([{ id: "endless", objective: "write endless.txt", scope: ["endless.txt"] }]);
  const t0 = "2026-12-01T09:00:00.000Z";
  const env = { ...l.env, LOOP_TEST_GATE: join(l.dir, "never"), HANDOFF_NOW: t0 };
  const first = start(["loop", "run", "--agent-cmd", l.agent, "--unit-timeout", "1m", "--poll", "100ms"], { cwd: l.repo, agent: "lead", env });
  await until(() => l.starts().length === 1 && loopRecord(l.repo).units[0].pid, "the agent to start");
  first.child.kill("SIGKILL");
  await first.exited;
  const pid = loopRecord(l.repo).units[0].pid;
  // Two minutes later by the clock the loop reads: the unit started at t0 has run too long.
  const later = cli(["loop", "run", "--agent-cmd", l.agent, "--unit-timeout", "1m", "--poll", "100ms", "--json"], { cwd: l.repo, agent: "lead", env: { ...env, HANDOFF_NOW: "2026-12-01T09:02:00.000Z" } });
  assert.is(later.code, 3, later.stderr);
  assert.match(later.stderr, "u1: ran past --unit-timeout (1 min): stopping its agent");
  const [u] = later.json.units;
  assert.is(u.phase, "failed");
  assert.match(u.note, "the agent ran past --unit-timeout and was stopped with endless is claimed; released endless");
  assert.is(u.starts, 1);
  assert.is(l.starts().length, 1);
  assert.is(taskStatus(l.repo, "endless"), "todo");
  assert.not.ok(processAlive(pid, null), "the agent was stopped");
});

test("a unit folder of the same name left by another repository's loop is not reused", async () => {
  const l = await loopRepo([{ id: "mine", objective: "write mine.txt", scope: ["mine.txt"] }]);
  const now = "2026-12-01T08:00:00.000Z";
  const id = new Date(now).getTime().toString(36);
  const stale = join(l.dir, `handoff-loop-${id}-u1`, "worktree");
  mkdirSync(join(stale, ".git"), { recursive: true });
  const r = cli(["loop", "run", "--agent-cmd", l.agent, "--keep", "--poll", "100ms", "--json"], { cwd: l.repo, agent: "lead", env: { ...l.env, HANDOFF_NOW: now } });
  assert.is(r.code, 0, r.stderr);
  const [u] = r.json.units;
  assert.is(u.phase, "merged");
  assert.is(u.worktree, join(l.dir, `handoff-loop-${id}-u1-2`, "worktree"));
  assert.is(gitOut(l.repo, "show", "main:mine.txt"), `mine by ${u.agent}`);
});

test.run();
