// A worker finishes a task that has a verify command as `done` does: the command runs in the
// task's worktree, only if written or approved in the worker's clone; passed -> review, failed ->
// the verification recorded and the task failed. A command nobody approved there never runs: the
// task stays in the queue until a person approves it. A task in review is not taken; one whose
// review was rejected is back in the queue and goes through the gate again. Two clones of one bare
// remote: the lead's, where the tasks are written, and the worker's.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempDir, tempRepo, type CliResult } from "./support/repo.ts";
import { POLL, remoteTask, script, start, stop, until } from "./support/handover.ts";
import { storeSync, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

function ok(r: CliResult): CliResult {
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stdout}\n${r.stderr}`);
  return r;
}

/** A bare remote, the lead's clone (with the remote's main) and the worker's clone. */
function team(): { bare: string; lead: string; box: string } {
  const bare = tempDir();
  gitOut(bare, "init", "-q", "--bare", "-b", "main");
  const lead = tempRepo();
  gitOut(lead, "remote", "add", "origin", bare);
  gitOut(lead, "push", "-q", "origin", "main");
  const box = tempDir();
  gitOut(box, "clone", "-q", bare, ".");
  gitOut(box, "config", "handoff.machine", "m2");
  return { bare, lead, box };
}

const sha = (cmd: string) => createHash("sha256").update(cmd).digest("hex");
const count = (text: string, re: RegExp) => (text.match(re) ?? []).length;

test("verify runs where the work was done and only if approved here: passed -> review, failed -> failed, unapproved -> left in the queue", async () => {
  const { bare, lead, box } = team();
  const marks = tempDir("handoff-marks-");
  const foreignCmd = `touch ${join(marks, "foreign-ran")}`;
  // The tasks and the box's sync of them: written in-process (support/seed.ts).
  await storeTasks({ cwd: lead, agent: "lead", push: true }, [
    { id: "good", objective: "make the file", priority: 3, verify: "test -f made.txt" },
    { id: "bad", objective: "breaks the build", priority: 2, verify: "echo broken; exit 7" },
    { id: "foreign", objective: "written elsewhere", priority: 1, verify: foreignCmd },
  ]);
  // A person in the worker's clone approves two of the three commands.
  await storeSync({ cwd: box, agent: "person" });
  ok(cli(["approve", "good"], { cwd: box, agent: "person", env: { HANDOFF_APPROVE: sha("test -f made.txt") } }));
  ok(cli(["approve", "bad"], { cwd: box, agent: "person", env: { HANDOFF_APPROVE: sha("echo broken; exit 7") } }));

  const w = start(["worker", "--exec", script("touch made.txt; echo did it"), "--poll", POLL], { cwd: box, agent: "w@m2" });
  try {
    await until(() => /good: in review/.test(w.stderr()) && /bad: failed/.test(w.stderr()) && /foreign's verify command was not written or approved/.test(w.stderr()), "good and bad finished, foreign passed over");
    // A few polls more: foreign is still not taken, and its command never ran.
    await new Promise((r) => setTimeout(r, 1500));
    assert.is(count(w.stderr(), /foreign: claimed/g), 0, w.stderr());
    assert.is(count(w.stderr(), /foreign's verify command was not written/g), 1, "said once, not at every poll");
    assert.match(w.stderr(), /git handoff approve foreign/);
    assert.is(remoteTask(bare, "foreign").status, "todo");
    assert.is(existsSync(join(marks, "foreign-ran")), false);

    const good = remoteTask(bare, "good");
    assert.is(good.status, "review", "not done: the review gate holds");
    assert.is(good.review.submitted_by, "w@m2");
    assert.is(good.review.verification.passed, true);
    assert.is(good.review.verification.command, "test -f made.txt");
    assert.is(good.claim, null);
    const bad = remoteTask(bare, "bad");
    assert.is(bad.status, "failed");
    assert.match(bad.result.reason, "its verification failed (exit 7): echo broken; exit 7");
    assert.is(bad.review.verification.passed, false);
    assert.match(bad.review.verification.output_tail, "broken");
    // The waiter's answer says the same.
    const result = JSON.parse(gitOut(bare, "show", "refs/handoff/results/bad:result.json"));
    assert.is(result.status, "failed");
    assert.match(result.reason, "exit 7");
    assert.is(result.output, "did it\n");

    // Approved meanwhile by a person: taken at the next poll, and its command runs.
    ok(cli(["approve", "foreign"], { cwd: box, agent: "person", env: { HANDOFF_APPROVE: sha(foreignCmd) } }));
    await until(() => /foreign: in review/.test(w.stderr()), "foreign taken once approved");
    assert.is(existsSync(join(marks, "foreign-ran")), true);

    // In review: not taken. Rejected: back in the queue, done again, and through the gate again.
    assert.is(count(w.stderr(), /good: claimed/g), 1);
    ok(cli(["sync"], { cwd: lead, agent: "lead" }));
    const queue = ok(cli(["review", "--json"], { cwd: lead, agent: "lead" })).json;
    assert.equal(queue.map((i: { task: string }) => i.task).sort(), ["foreign", "good"]);
    ok(cli(["review", "reject", "good", "--reason", "name the file better", "--push"], { cwd: lead, agent: "lead" }));
    await until(() => count(w.stderr(), /good: in review/g) === 2, "good done again after the rejection");
    assert.is(count(w.stderr(), /good: claimed/g), 2);
    const again = remoteTask(bare, "good");
    assert.is(again.status, "review");
    assert.is(again.review.decision, null, "a new submission, not yet judged");
  } finally {
    assert.is(await stop(w), 130);
  }
  assert.match(w.stderr(), /worker stopped: 0 done, 3 in review, 1 failed/);
});

test("a task rejected in review comes back to the worker's command with the reviewer's reason (HANDOFF_REJECTION, the task file)", async () => {
  const { lead, box } = team();
  const seen = tempDir("handoff-seen-");
  await storeTasks({ cwd: lead, agent: "lead", push: true }, [{ id: "notes", objective: "write the notes", verify: "true" }]);
  await storeSync({ cwd: box, agent: "person" });
  ok(cli(["approve", "notes"], { cwd: box, agent: "person", env: { HANDOFF_APPROVE: sha("true") } }));
  // Each run keeps what it was given: run 0, then run 1.
  const job = script(`if [ -e "${seen}/env-0" ]; then n=1; else n=0; fi; printf '%s' "\${HANDOFF_REJECTION-unset}" > "${seen}/env-$n"; cp "$HANDOFF_TASK_FILE" "${seen}/task-$n.json"; echo did it`);
  const w = start(["worker", "--exec", job, "--poll", POLL], { cwd: box, agent: "w@m2" });
  try {
    await until(() => /notes: in review/.test(w.stderr()), "notes done and in review");
    ok(cli(["sync"], { cwd: lead, agent: "lead" }));
    // Another agent's text: a newline stays, a terminal escape arrives escaped (exact in the file).
    const reason = "the notes miss the API section\nand \x1b[31mthe examples";
    ok(cli(["review", "reject", "notes", "--reason", reason, "--push"], { cwd: lead, agent: "lead" }));
    await until(() => count(w.stderr(), /notes: in review/g) === 2, "notes done again after the rejection");
    assert.is(readFileSync(join(seen, "env-0"), "utf8"), "unset");
    assert.is(JSON.parse(readFileSync(join(seen, "task-0.json"), "utf8")).rejection, null);
    assert.is(readFileSync(join(seen, "env-1"), "utf8"), "the notes miss the API section\nand \\x1b[31mthe examples");
    const again = JSON.parse(readFileSync(join(seen, "task-1.json"), "utf8"));
    assert.equal([again.rejection.by, again.rejection.reason, again.untrusted], ["lead", reason, true]);
    assert.match(w.stderr(), "notes: again after a rejection by lead: the notes miss the API section (the command gets it as HANDOFF_REJECTION)");
  } finally {
    assert.is(await stop(w), 130);
  }
});

test("worker --once whose only ready task waits for an approval here ends at once (unapproved_command, exit 3) instead of polling; approved, it takes it", async () => {
  const { bare, lead, box } = team();
  await storeTasks({ cwd: lead, agent: "lead", push: true }, [
    { id: "gated", objective: "check it", verify: "true" },
    // Not one it could take in any case: no reason to end, nor to wait for it.
    { id: "away", objective: "for m9", to: "@m9" },
  ]);
  const once = (json = false) => start([...(json ? ["--json"] : []), "worker", "--exec", script("echo ok"), "--once", "--poll", POLL], { cwd: box, agent: "w@m2" });
  const ended = async (w: ReturnType<typeof start>) => {
    const t = setTimeout(() => w.child.kill("SIGKILL"), 20_000);
    const code = await w.exited;
    clearTimeout(t);
    return code;
  };
  const w = once();
  assert.is(await ended(w), 3, w.stderr());
  assert.match(w.stderr(), "worker --once took nothing: the only ready task it could take (gated) has a verify command nobody approved in this clone");
  assert.match(w.stderr(), "git handoff approve gated");
  assert.match(w.stderr(), "[unapproved_command]");
  assert.equal([remoteTask(bare, "gated").status, remoteTask(bare, "gated").claim], ["todo", null]);
  const j = once(true);
  assert.is(await ended(j), 3, j.stderr());
  assert.equal([JSON.parse(j.stdout()).error.code, JSON.parse(j.stdout()).error.data.tasks], ["unapproved_command", ["gated"]]);
  // Approved by a person here: the next --once takes it.
  ok(cli(["approve", "gated"], { cwd: box, agent: "person", env: { HANDOFF_APPROVE: sha("true") } }));
  const again = once();
  assert.is(await ended(again), 0, again.stderr());
  assert.is(remoteTask(bare, "gated").status, "review");
});

test("--addressed-only leaves tasks addressed to anyone; without it a worker takes them", async () => {
  const { bare, lead, box } = team();
  ok(cli(["task", "add", "for anyone", "--id", "anyone", "--priority", "9", "--push"], { cwd: lead, agent: "lead" }));
  ok(cli(["task", "add", "for w", "--id", "mine", "--priority", "1", "--to", "w", "--push"], { cwd: lead, agent: "lead" }));
  const only = start(["worker", "--exec", script("echo ok"), "--once", "--addressed-only", "--poll", POLL], { cwd: box, agent: "w@m2" });
  assert.is(await only.exited, 0, only.stderr());
  assert.match(only.stderr(), /taking tasks addressed to it \(not those addressed to anyone\)/);
  assert.is(remoteTask(bare, "mine").status, "done");
  assert.is(remoteTask(bare, "anyone").status, "todo");
  const any = start(["worker", "--exec", script("echo ok"), "--once", "--poll", POLL], { cwd: box, agent: "w@m2" });
  assert.is(await any.exited, 0, any.stderr());
  assert.match(any.stderr(), /taking tasks addressed to it or to anyone/);
  assert.is(remoteTask(bare, "anyone").status, "done");
});

test.run();
