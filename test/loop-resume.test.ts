// The loop survives its own death: kill -9 of `loop run`, then `loop run` again resumes from the
// record at refs/handoff/loop: a live agent is watched, a dead one restarted only after its claims
// are given back, no unit runs twice, no worktree leaks. And `loop stop`, with the loop alive or dead.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempDir } from "./support/repo.ts";
import { linkedWorktrees, loopRecord, loopRepo, taskStatus, unitHomes } from "./support/loop.ts";
import { start, until, type Proc } from "./support/handover.ts";

test.after(cleanupTemp);

const TWO = [
  { id: "alpha", objective: "write alpha.txt", scope: ["alpha.txt"] },
  { id: "beta", objective: "write beta.txt", scope: ["beta.txt"] },
];

/** Whether the process runs (a zombie nobody reaped, as an orphan may be here, does not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] !== "Z";
  } catch {
    return false;
  }
}

async function killHard(p: Proc): Promise<void> {
  p.child.kill("SIGKILL");
  await p.exited;
}

function eventsOf(repo: string, id: string): string[] {
  return gitOut(repo, "log", "--reverse", "--format=%B%x00", `refs/handoff/tasks/${id}`)
    .split("\0")
    .map((m) => m.trim())
    .filter(Boolean)
    .map((m) => JSON.parse(m.slice(m.indexOf("\n\n{") + 2)).type);
}

test("kill -9 of the loop: its agents live on; loop run again watches them, starts nothing twice, merges and cleans up", async () => {
  const l = await loopRepo(TWO);
  const gate = join(l.dir, "gate");
  const env = { ...l.env, LOOP_TEST_GATE: gate };
  const first = start(["loop", "run", "--agent-cmd", l.agent, "--verify", "test -f alpha.txt -o -f beta.txt", "--merge", "squash", "--poll", "100ms"], { cwd: l.repo, agent: "lead", env });
  await until(() => l.starts().length === 2, "both agents to start");
  await until(() => loopRecord(l.repo).units.every((u: any) => u.phase === "running" && u.pid), "the record to name both agents");
  await killHard(first);
  const rec = loopRecord(l.repo);
  assert.is(rec.phase, "running");
  for (const u of rec.units) assert.ok(alive(u.pid), `${u.id}'s agent outlived the loop`);
  // Any worktree shows where things stand.
  const status = cli(["loop", "status", "--json"], { cwd: rec.units[0].worktree });
  assert.equal(status.json.units.map((u: any) => [u.id, u.phase, u.pid]), rec.units.map((u: any) => [u.id, "running", u.pid]));
  // Its check is not in the record (no command is): resuming without one is refused.
  const unchecked = cli(["loop", "run", "--agent-cmd", l.agent], { cwd: l.repo, agent: "lead", env });
  assert.is(unchecked.code, 2, unchecked.stderr);
  assert.match(unchecked.stderr, `loop ${rec.id} was started with --verify: give the check again to resume it`);
  const again = start(["loop", "run", "--agent-cmd", l.agent, "--verify", "test -f alpha.txt -o -f beta.txt", "--poll", "100ms", "--json"], { cwd: l.repo, agent: "lead", env });
  await until(() => /resuming/.test(again.stderr()), "the loop to resume");
  writeFileSync(gate, "");
  assert.is(await again.exited, 0, again.stderr());
  const out = JSON.parse(again.stdout());
  assert.is(out.id, rec.id);
  assert.equal(out.units.map((u: any) => [u.phase, u.starts]), [["merged", 1], ["merged", 1]]);
  assert.is(out.strategy, "squash", "a resumed loop goes on as it was started");
  assert.is(gitOut(l.repo, "rev-list", "--merges", "--count", "main"), "0");
  assert.is(l.starts().length, 2, "no agent started twice");
  for (const t of TWO) {
    assert.is(taskStatus(l.repo, t.id), "done");
    assert.equal(eventsOf(l.repo, t.id), ["created", "claimed", "done"]);
  }
  assert.ok(existsSync(join(l.repo, "alpha.txt")) && existsSync(join(l.repo, "beta.txt")));
  assert.equal(linkedWorktrees(l.repo), []);
  assert.equal(unitHomes(l.dir, rec.id), []);
});

test("kill -9 of the loop and of one agent: that unit's claim is released, then it starts again; the live one is only watched", async () => {
  const l = await loopRepo(TWO);
  const gate = join(l.dir, "gate");
  const env = { ...l.env, LOOP_TEST_GATE: gate };
  const first = start(["loop", "run", "--agent-cmd", l.agent, "--poll", "100ms"], { cwd: l.repo, agent: "lead", env });
  await until(() => l.starts().length === 2 && loopRecord(l.repo).units.every((u: any) => u.pid), "both agents to start");
  await killHard(first);
  const [u1, u2] = loopRecord(l.repo).units;
  process.kill(-u1.pid, "SIGKILL");
  await until(() => !alive(u1.pid), "u1's agent to die");
  assert.is(taskStatus(l.repo, "alpha"), "claimed", "a dead agent's claim stays until someone gives it back");
  writeFileSync(gate, "");
  const again = start(["loop", "run", "--agent-cmd", l.agent, "--poll", "100ms", "--json"], { cwd: l.repo, agent: "lead", env });
  assert.is(await again.exited, 0, again.stderr());
  const out = JSON.parse(again.stdout());
  assert.equal(out.units.map((u: any) => [u.id, u.phase, u.starts]), [["u1", "merged", 2], ["u2", "merged", 1]]);
  assert.match(again.stderr(), `u1: agent (pid ${u1.pid}) is gone; released alpha; restarting it`);
  assert.equal(l.starts().map((s) => s.unit).sort(), ["u1", "u1", "u2"]);
  assert.equal(eventsOf(l.repo, "alpha"), ["created", "claimed", "released", "claimed", "done"]);
  assert.equal(eventsOf(l.repo, "beta"), ["created", "claimed", "done"]);
  assert.not.ok(alive(u2.pid));
  // The loop says why it kept one (a live agent, uncommitted changes): seen once under load, not reproduced alone.
  assert.equal(linkedWorktrees(l.repo), [], again.stderr());
});

test("loop stop: agents end, claims go back, a worktree with uncommitted work is kept and named, the rest removed", async () => {
  const l = await loopRepo(TWO);
  const env = { ...l.env, LOOP_TEST_GATE: join(l.dir, "never"), LOOP_TEST_SCRIBBLE: "u1" };
  const run = start(["loop", "run", "--agent-cmd", l.agent, "--poll", "100ms"], { cwd: l.repo, agent: "lead", env });
  await until(() => l.starts().length === 2 && loopRecord(l.repo).units.every((u: any) => u.pid), "both agents to start");
  const [u1, u2] = loopRecord(l.repo).units;
  await until(() => existsSync(join(u1.worktree, "scribble.txt")), "u1 to scribble");
  const other = join(tempDir(), "wt");
  gitOut(l.repo, "worktree", "add", "-q", "--detach", other);
  // A loop running in this clone is not abandoned: loop stop ends it properly.
  const abandon = cli(["loop", "stop", "--abandon", "--json"], { cwd: other, agent: "lead" });
  assert.is(abandon.code, 3, abandon.stderr);
  assert.is(abandon.json.error.code, "wrong_state");
  assert.match(abandon.json.error.message, /runs here \(pid \d+\): end it with loop stop/);
  assert.is(loopRecord(l.repo).phase, "running");
  const stop = cli(["loop", "stop", "--json"], { cwd: other, agent: "lead" });
  assert.is(stop.code, 0, stop.stderr);
  assert.is(stop.json.phase, "stopped");
  assert.is(await run.exited, 0, run.stderr());
  const [s1, s2] = stop.json.units;
  assert.is(s1.phase, "stopped");
  assert.match(s1.note, "released alpha");
  assert.match(s1.note, `kept ${u1.worktree}: it has uncommitted changes (scribble.txt)`);
  assert.is(s2.phase, "stopped");
  assert.is(s2.kept, false);
  assert.not.ok(alive(u1.pid) || alive(u2.pid), "both agents ended");
  assert.is(taskStatus(l.repo, "alpha"), "todo");
  assert.is(taskStatus(l.repo, "beta"), "todo");
  assert.ok(existsSync(join(u1.worktree, "scribble.txt")), "uncommitted work survives");
  assert.not.ok(existsSync(u2.worktree));
  assert.equal(linkedWorktrees(l.repo).sort(), [other, u1.worktree].sort());
  assert.is(gitOut(l.repo, "branch", "--list", u2.branch), "");
  assert.is(loopRecord(l.repo).phase, "stopped");
});

test("loop stop after the loop was killed: it stops the orphaned agents and cleans up itself", async () => {
  const l = await loopRepo(TWO);
  const env = { ...l.env, LOOP_TEST_GATE: join(l.dir, "never") };
  const run = start(["loop", "run", "--agent-cmd", l.agent, "--poll", "100ms"], { cwd: l.repo, agent: "lead", env });
  await until(() => l.starts().length === 2 && loopRecord(l.repo).units.every((u: any) => u.pid), "both agents to start");
  await killHard(run);
  const units = loopRecord(l.repo).units;
  const loopCheck = () => cli(["doctor", "--json"], { cwd: l.repo }).json.checks.find((c: any) => c.name === "loop");
  const warned = loopCheck();
  assert.is(warned.status, "warn");
  assert.match(warned.detail, `process (pid ${run.child.pid}) is gone while it is running; its agents of u1, u2 still run`);
  assert.match(warned.fix, "git handoff loop stop");
  const stop = cli(["loop", "stop"], { cwd: l.repo, agent: "lead" });
  assert.is(stop.code, 0, stop.stderr);
  assert.match(stop.stderr, "its process");
  assert.match(stop.stdout, "u1 stopped");
  for (const u of units) assert.not.ok(alive(u.pid), `${u.id}'s agent ended`);
  assert.equal(linkedWorktrees(l.repo), []);
  assert.is(taskStatus(l.repo, "alpha"), "todo");
  assert.equal([loopCheck().status, loopCheck().detail], ["ok", `loop ${loopRecord(l.repo).id} is stopped`]);
  // Stopped is final: the next run plans anew, with a new id.
  const next = cli(["loop", "plan", "--json"], { cwd: l.repo });
  assert.equal(next.json.units.map((u: any) => u.tasks), [["alpha"], ["beta"]]);
});

test.run();
