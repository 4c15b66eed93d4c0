// MCP that follows the remote: clone A's create_task (to, context, files) and wait_task get the
// result of clone B's worker; B's watch sees a task pushed from A; complete_task's output and
// files reach A's `wait`; a worker's own task addressed back to it is refused (would_deadlock).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { shims } from "./agents/clients.ts";
import { cli, gitOut } from "./support/repo.ts";
import { remoteForFile, onceWorker, script, start } from "./support/handover.ts";
import { inProcess } from "./support/mcp.ts";
import { storeCancel, storeTasks } from "./support/seed.ts";

const net = remoteForFile(test, "mcp-handover");


test("create_task with to, context and files, then wait_task: B's worker's output, files saved under ./handoff-<id>/", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  writeFileSync(join(a, "data.csv"), "x,y\n1,2\n");
  const w = onceWorker(b, script(`cat "$HANDOFF_IN_DIR/context.md"; wc -l < "$HANDOFF_IN_DIR/data.csv" > "$HANDOFF_OUT_DIR/lines.txt"`));
  const mcp = await inProcess(a, { agent: "alice", waitBoundMs: 20_000 });
  try {
    const created = await mcp.ok("create_task", { objective: "count the lines", to: "codex@m2", context: "use wc -l\n", files: ["data.csv"] });
    const id = created.task.id;
    assert.equal(created.task.to, { kind: "codex", machine: "m2" });
    assert.equal(created.files, [{ name: "data.csv", size: 8 }]);
    // Pushed at once: the remote has the task and its inputs.
    assert.match(gitOut(net.bare, "for-each-ref", "--format=%(refname)", `refs/handoff/inputs/${id}`), `refs/handoff/inputs/${id}`);
    let r: any;
    for (let i = 0; i < 6; i++) {
      r = await mcp.ok("wait_task", { id });
      if (r.final) break;
    }
    assert.is(r.final, true, JSON.stringify(r));
    assert.is(r.task.status, "done");
    assert.is(r.output, "use wc -l\n");
    const dir = join(a, `handoff-${id}`);
    assert.equal(r.files, [{ name: "lines.txt", size: readFileSync(join(dir, "lines.txt")).length, path: join(dir, "lines.txt") }]);
    assert.is(readFileSync(join(dir, "lines.txt"), "utf8").trim(), "2");
    assert.is(await w.exited, 0, w.stderr());
  } finally {
    await mcp.close();
  }
});

test("wait_task says final: false (call again) while B has not finished", async () => {
  const a = net.clone("m1");
  const mcp = await inProcess(a, { agent: "alice", waitBoundMs: 20_000 });
  try {
    const { task } = await mcp.ok("create_task", { objective: "nobody takes this", to: "nobody@nowhere" });
    const r = await mcp.ok("wait_task", { id: task.id, timeout_seconds: 1 });
    assert.is(r.final, false);
    assert.match(r.summary, "call wait_task again");
    assert.equal(r.next?.[0]?.tool, "wait_task");
  } finally {
    await mcp.close();
  }
});

test("watch in B sees a task pushed from A (B never syncs by itself)", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const mcp = await inProcess(b, { agent: "codex@m2", waitBoundMs: 20_000 });
  try {
    const watching = mcp.ok("watch", { timeout_seconds: 15 });
    await new Promise((r) => setTimeout(r, 300));
    // A task for another kind of agent is not work for codex@m2: watch goes on waiting.
    assert.is(cli(["task", "add", "not for codex", "--id", "for-claude", "--to", "claude@m2", "--push"], { cwd: a, agent: "alice" }).code, 0);
    await new Promise((r) => setTimeout(r, 1500));
    const added = cli(["task", "add", "from the other clone", "--id", "pushed-1", "--push"], { cwd: a, agent: "alice" });
    assert.is(added.code, 0, added.stderr);
    const pushedAt = Date.now();
    const r = await watching;
    const seenAfter = Date.now() - pushedAt;
    process.stdout.write(`  watch saw the pushed task ${seenAfter} ms after the push returned\n`);
    assert.is(r.timed_out, false, JSON.stringify(r));
    assert.equal(r.ready.map((t: any) => t.id), ["pushed-1"]);
    // Out of the way of the next tests' workers.
    for (const id of ["pushed-1", "for-claude"]) await storeCancel({ cwd: a, agent: "alice", push: true }, id, "seen");
  } finally {
    await mcp.close();
  }
});

test("complete_task with output and files: A's wait gets them; FAILED: as the first line fails it", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  await storeTasks({ cwd: a, agent: "alice", push: true }, [
    { id: "by-hand", objective: "answer by hand", to: "claude@m2", priority: 10 },
    { id: "by-hand-2", objective: "cannot be done", to: "claude@m2" },
  ]);
  const mcp = await inProcess(b, { agent: "claude@m2", waitBoundMs: 20_000 });
  try {
    const claimed = await mcp.ok("watch", { claim: true, timeout_seconds: 15 });
    assert.is(claimed.claimed?.id, "by-hand", JSON.stringify(claimed));
    writeFileSync(join(b, "report.txt"), "all good\n");
    const done = await mcp.ok("complete_task", { id: "by-hand", output: "it works\n", files: ["report.txt"] });
    assert.is(done.task.status, "done");
    const waited = cli(["wait", "--id", "by-hand", "--timeout", "30s", "--json"], { cwd: a, agent: "alice" });
    assert.is(waited.code, 0, waited.stderr);
    assert.is(waited.json.output, "it works\n");
    assert.is(readFileSync(join(a, "handoff-by-hand", "report.txt"), "utf8"), "all good\n");

    assert.is((await mcp.ok("claim_task", { id: "by-hand-2" })).task.status, "claimed");
    assert.is((await mcp.ok("complete_task", { id: "by-hand-2", output: "FAILED: no access\n" })).task.status, "failed");
    const failed = cli(["wait", "--id", "by-hand-2", "--timeout", "30s", "--json"], { cwd: a, agent: "alice" });
    assert.is(failed.code, 6, failed.stderr);
    assert.is(failed.json.failure_reason, "no access");
    // A missing result file is refused before anything is written.
    const missing = await mcp.refused("complete_task", { id: "by-hand", files: ["nope.txt"] });
    assert.is(missing.code, "invalid_input");
  } finally {
    await mcp.close();
  }
});

test("a worker's own task handing work back to that worker is refused: would_deadlock, nothing created", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const job = script(`PATH="${shims()}:$PATH" git-handoff wait --objective "help me" --to codex@m2 --timeout 5s; echo "inner exit $?"`);
  const w = onceWorker(b, job);
  const waited = start(["wait", "--objective", "delegate to yourself", "--to", "codex@m2", "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
  assert.is(await waited.exited, 0, waited.stderr() + w.stderr());
  const out = JSON.parse(waited.stdout());
  assert.match(out.output, "inner exit 3");
  assert.is(await w.exited, 0);
  assert.match(w.stderr(), /would wait for itself/);
  // No inner task reached the remote.
  const objectives = gitOut(net.bare, "for-each-ref", "--format=%(refname)", "refs/handoff/tasks/")
    .split("\n")
    .map((ref) => JSON.parse(gitOut(net.bare, "show", `${ref}:task.json`)).objective);
  assert.ok(objectives.includes("delegate to yourself"));
  assert.not.ok(objectives.includes("help me"));
  // The same through MCP create_task, from a process that says it runs inside worker codex@m2.
  const mcp = await inProcess(b, { agent: "codex@m2" });
  const saved = { ...process.env };
  Object.assign(process.env, { HANDOFF_WORKER: "codex@m2", HANDOFF_WORKER_MACHINE: "m2", HANDOFF_TASK_ID: out.id });
  try {
    const refused = await mcp.refused("create_task", { objective: "help me", to: "codex" });
    assert.is(refused.code, "would_deadlock");
    assert.match(refused.message, `task ${out.id} of worker codex@m2`);
    // A task for that worker created otherwise (task add --to), then waited on: refused too.
    await mcp.ok("create_task", { objective: "queued for later", id: "later-for-me", to: "ghost@m9" });
    Object.assign(process.env, { HANDOFF_WORKER: "ghost@m9", HANDOFF_WORKER_MACHINE: "m9" });
    assert.is((await mcp.refused("wait_task", { id: "later-for-me", timeout_seconds: 5 })).code, "would_deadlock");
    assert.not.ok(existsSync(join(b, "handoff-x")));
  } finally {
    for (const k of ["HANDOFF_WORKER", "HANDOFF_WORKER_MACHINE", "HANDOFF_TASK_ID"]) if (saved[k] === undefined) delete process.env[k];
    await mcp.close();
  }
});

test.run();
