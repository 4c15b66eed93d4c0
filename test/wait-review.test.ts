// `git handoff wait` on a task with a verify command: a worker's submission sends it to review,
// which is not its end. By default the wait follows it through the review (and a rejection, and
// the work done again) to its final state, saying at each step where it is; `--until review`
// returns once the work is submitted, with what was submitted, for a waiter who reviews it.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { POLL, remoteTask, script, start, until } from "./support/handover.ts";
import { cleanupTemp, cli, gitOut, tempDir, type CliResult } from "./support/repo.ts";
import { cloneOf, emptyRemote } from "./support/servers.ts";
import { inProcess } from "./support/mcp.ts";
import { storeSync, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

function ok(r: CliResult): CliResult {
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stdout}\n${r.stderr}`);
  return r;
}

const sha = (cmd: string) => createHash("sha256").update(cmd).digest("hex");

/** The lead's clone, where task `gated` (verify `true`) is written, and a worker's, where a person approved its command (the task and the worker clone's sync in-process, support/seed.ts; the approval a person's command). */
async function gatedTask(): Promise<{ bare: string; lead: string; box: string }> {
  const bare = emptyRemote();
  const lead = cloneOf(bare);
  const box = cloneOf(bare);
  gitOut(box, "config", "handoff.machine", "m2");
  await storeTasks({ cwd: lead, agent: "lead", push: true }, [{ id: "gated", objective: "write the report", verify: "true" }]);
  await storeSync({ cwd: box, agent: "person" });
  ok(cli(["approve", "gated"], { cwd: box, agent: "person", env: { HANDOFF_APPROVE: sha("true") } }));
  return { bare, lead, box };
}

/** A worker that takes one task: its command prints `answer` and leaves report.txt. */
function worker(box: string, answer: string) {
  return start(["worker", "--exec", script(`echo "${answer}" > "$HANDOFF_OUT_DIR/report.txt"; echo "${answer}"`), "--once", "--poll", POLL], { cwd: box, agent: "w@m2" });
}

test("wait --id on a task that goes to review: it says so and waits on, through a rejection, until a reviewer accepts; exit 0 with the accepted work", async () => {
  const { bare, lead, box } = await gatedTask();
  const out = tempDir();
  const w = start(["wait", "--id", "gated", "--out", out], { cwd: lead, agent: "lead" });
  await until(() => /waiting for gated/.test(w.stderr()), "the wait to start");
  assert.is(await worker(box, "first try").exited, 0);
  await until(() => /gated: in review, submitted by w@m2: a reviewer decides \(git handoff review accept\|reject gated\)/.test(w.stderr()), "the wait to see the submission");
  // In review is not the end: the wait is still there.
  assert.is(w.child.exitCode, null, w.stderr());
  ok(cli(["sync"], { cwd: lead, agent: "lead" }));
  ok(cli(["review", "reject", "gated", "--reason", "no numbers in it", "--push"], { cwd: lead, agent: "lead" }));
  await until(() => /gated: rejected in review by lead: no numbers in it; back in the queue/.test(w.stderr()), "the wait to see the rejection");
  assert.is(await worker(box, "second try").exited, 0);
  await until(() => (w.stderr().match(/gated: in review/g) ?? []).length === 2, "the wait to see the second submission");
  ok(cli(["sync"], { cwd: lead, agent: "lead" }));
  ok(cli(["review", "accept", "gated", "--push"], { cwd: lead, agent: "lead" }));
  assert.is(await w.exited, 0, w.stderr());
  assert.match(w.stderr(), "gated: done");
  assert.is(w.stdout(), "second try\n");
  assert.is(readFileSync(join(out, "report.txt"), "utf8"), "second try\n");
  assert.is(remoteTask(bare, "gated").status, "done");
});

test("wait --until review returns once the work is submitted: exit 0, status review, the submitted output and files; bad --until is a usage error", async () => {
  const { bare, lead, box } = await gatedTask();
  const out = tempDir();
  const w = start(["wait", "--id", "gated", "--until", "review", "--out", out, "--json"], { cwd: lead, agent: "lead" });
  await until(() => /waiting for gated/.test(w.stderr()), "the wait to start");
  assert.is(await worker(box, "for review").exited, 0);
  assert.is(await w.exited, 0, w.stderr());
  const body = JSON.parse(w.stdout());
  assert.equal([body.status, body.code, body.output, body.failure_reason], ["review", null, "for review\n", null]);
  assert.equal(body.files.map((f: { name: string }) => f.name), ["report.txt"]);
  assert.is(readFileSync(join(out, "report.txt"), "utf8"), "for review\n");
  assert.is(remoteTask(bare, "gated").status, "review", "the decision is still the reviewer's");
  const bad = cli(["wait", "--id", "gated", "--until", "accepted"], { cwd: lead, agent: "lead" });
  assert.is(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, "--until \"accepted\": give final or review");
});

test("MCP wait_task until review returns at the submission with what was submitted (as wait --until review); without it, a task in review is not final", async () => {
  const { bare, lead, box } = await gatedTask();
  const mcp = await inProcess(lead, { agent: "lead", waitBoundMs: 20_000 });
  try {
    const w = worker(box, "for review");
    assert.is(await w.exited, 0, w.stderr());
    const plain = await mcp.ok("wait_task", { id: "gated", timeout_seconds: 1 });
    assert.equal([plain.final, plain.task.status], [false, "review"], "in review is not the end by default");
    const r = await mcp.ok("wait_task", { id: "gated", until: "review" });
    assert.equal([r.final, r.task.status, r.output], [true, "review", "for review\n"]);
    assert.equal(r.files.map((f: { name: string }) => f.name), ["report.txt"]);
    assert.is(readFileSync(r.files[0].path, "utf8"), "for review\n");
    assert.is(remoteTask(bare, "gated").status, "review", "the decision is still the reviewer's");
    const bad = await mcp.call("wait_task", { id: "gated", until: "accepted" });
    assert.ok(bad.isError, JSON.stringify(bad));
    assert.match(JSON.stringify(bad.content), /until/);
  } finally {
    await mcp.close();
  }
});

test.run();
