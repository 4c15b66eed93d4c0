// Waiters of one clone share one poller: six `wait --id` processes on two tasks ask the remote
// about as often as one waiter alone would, not six times as often, and every one of them still
// sees its result. A lock and a registration left by a process that is gone block nobody.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cli, tempDir } from "./support/repo.ts";
import { remoteForFile, script, start, stop, until } from "./support/handover.ts";

const log = join(tempDir("handoff-requests-"), "requests.log");
const net = remoteForFile(test, "shared", log);

/**
 * Remote reads (ls-remote or fetch) the remote received: each of git's calls opens with the GET,
 * each of git-handoff's own looks (src/git/http-remote.ts) is one ls-refs request.
 */
const reads = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter((l) => (l.startsWith("GET ") && l.includes("info/refs?service=git-upload-pack")) || l.endsWith("(git-handoff ls-refs)")).length : 0);

/** How many times one waiter alone looks in `ms`: at once, then after 250 ms growing by half to 2 s. */
function soloLooks(ms: number): number {
  let n = 1;
  let at = 0;
  for (let next = 250; (at += next) <= ms; next = Math.min(2000, Math.round(next * 1.5))) n++;
  return n;
}

test("six waiters on one clone share the polling and all see their results; a gone holder blocks nobody", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  for (const id of ["one", "two"]) assert.is(cli(["task", "add", `job ${id}`, "--id", id, "--push"], { cwd: a, agent: "lead" }).code, 0);

  // What a waiter killed -9 mid-poll leaves behind: the poll lock and its registration.
  const dead = spawnSync("true").pid!;
  const handoffDir = join(a, ".git", "handoff");
  const wants = join(handoffDir, "poll-origin");
  mkdirSync(wants, { recursive: true });
  writeFileSync(join(handoffDir, "poll-origin.lock"), JSON.stringify({ pid: dead, host: hostname(), start: null }));
  writeFileSync(join(wants, `${dead}-gone.json`), JSON.stringify({ pid: dead, host: hostname(), start: null, refs: ["refs/handoff/tasks/gone"] }));

  const waiters = ["one", "one", "one", "two", "two", "two"].map((id) => ({ id, p: start(["wait", "--id", id, "--timeout", "120s", "--json"], { cwd: a, agent: "alice" }) }));
  await until(() => readdirSync(wants).filter((n) => n.endsWith(".json") && !n.includes("gone")).length === waiters.length, "every waiter registered");
  const from = reads();
  const started = Date.now();
  await new Promise((r) => setTimeout(r, 5000)); // let them poll a while: nothing changes meanwhile
  const asked = reads() - from;
  const window = Date.now() - started;
  const solo = soloLooks(window);
  assert.ok(asked >= 1, "someone asked the remote");
  // Unshared, each waiter would ask about `solo` times: 6 x solo in all.
  assert.ok(asked <= solo + waiters.length, `${asked} remote reads in ${window} ms by ${waiters.length} waiters; one waiter alone makes about ${solo}`);
  assert.ok(asked * 2 < solo * waiters.length, `${asked} remote reads: not far fewer than ${solo * waiters.length}`);
  assert.not.ok(readdirSync(wants).some((n) => n.includes("gone")), "the registration of a gone process was dropped");
  for (const w of waiters) assert.is(w.p.child.exitCode, null, `wait --id ${w.id} is still waiting: ${w.p.stderr()}`);

  const worker = start(["worker", "--exec", script(`echo "did $HANDOFF_TASK_ID"`), "--poll", "100ms"], { cwd: b, agent: "codex@m2" });
  for (const w of waiters) {
    assert.is(await w.p.exited, 0, w.p.stderr());
    const out = JSON.parse(w.p.stdout());
    assert.is(out.id, w.id);
    assert.is(out.status, "done");
    assert.is(out.output, `did ${w.id}\n`);
  }
  await until(() => /one: done/.test(worker.stderr()) && /two: done/.test(worker.stderr()), "the worker reported both");
  await stop(worker);
  assert.equal(readdirSync(wants).filter((n) => n.endsWith(".json")), [], "waiters that ended left no registration");
  assert.not.ok(existsSync(join(handoffDir, "poll-origin.lock")), "no poll lock is left held");
});

test.run();
