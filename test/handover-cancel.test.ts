// The ways a handed-over task ends other than done: the waiter's --timeout (8) or Ctrl-C (130)
// cancel it and the worker stops the command; a worker killed -9 leaves a lease that expires, the
// task is requeued and finished by another worker, and after max_attempts expiries it fails (6).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, tempDir } from "./support/repo.ts";
import { httpRemote, POLL, remoteTask, script, start, stop, until, type Machines } from "./support/handover.ts";
import { alive } from "./support/alive.ts";

let net: Machines;
const groups: number[] = [];
test.before(async () => {
  net = await httpRemote("cancel");
});
test.after(async () => {
  for (const g of groups) killGroup(g);
  await net.server.stop();
  cleanupTemp();
});

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    /* gone */
  }
}

/** A job that records its process group, then runs until stopped. */
function longJob(): { job: string; pgid: () => number | null } {
  const file = join(tempDir(), "pgid");
  const job = script(`ps -o pgid= $$ | tr -d ' ' > "${file}.tmp" && mv "${file}.tmp" "${file}"; sleep 40; echo finished`);
  return {
    job,
    pgid: () => (existsSync(file) ? Number(readFileSync(file, "utf8").trim()) : null),
  };
}

const idFrom = (stderr: string) => /created (t-\S+)/.exec(stderr)?.[1] ?? null;

test("--timeout with nobody working: exit 8, the task cancelled on the remote", async () => {
  const a = net.clone("m1");
  const waited = start(["wait", "--objective", "nobody takes this", "--to", "nobody@nowhere", "--timeout", "1s", "--json"], { cwd: a, agent: "alice" });
  assert.is(await waited.exited, 8, waited.stderr());
  const out = JSON.parse(waited.stdout());
  assert.is(out.status, "cancelled");
  assert.is(out.code, "timed_out");
  assert.match(out.failure_reason, "--timeout 1s ran out");
  assert.is(remoteTask(net.bare, out.id).status, "cancelled");
});

test("--timeout while a worker holds it: exit 8; the worker notices, stops the command's process group", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const { job, pgid } = longJob();
  const w = start(["worker", "--exec", job, "--once", "--poll", POLL], { cwd: b, agent: "codex@m2" });
  const waited = start(["wait", "--objective", "slow", "--timeout", "4s"], { cwd: a, agent: "alice" });
  await until(() => pgid() !== null, "the command to start");
  groups.push(pgid()!);
  assert.is(await waited.exited, 8, waited.stderr());
  assert.match(waited.stderr(), /claimed by codex@m2/);
  assert.match(waited.stderr(), /: cancelled \(timed out\)/);
  assert.is(await w.exited, 0, w.stderr());
  assert.match(w.stderr(), /cancelled; stopped the command/);
  await until(() => !alive(pgid()!), "the command's process group to end", 10_000);
  const id = idFrom(waited.stderr())!;
  assert.is(remoteTask(net.bare, id).status, "cancelled");
});

test("SIGINT to wait: exit 130, the task cancelled, the worker stops the command", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const { job, pgid } = longJob();
  const waited = start(["wait", "--objective", "interrupt me", "--json"], { cwd: a, agent: "alice" });
  // The worker starts once the task is on the remote, so the command it runs is this task's.
  await until(() => /created \S+ and pushed it/.test(waited.stderr()), "the task to be pushed");
  const w = start(["worker", "--exec", job, "--once", "--poll", POLL], { cwd: b, agent: "codex@m2" });
  await until(() => pgid() !== null, "the command to start");
  groups.push(pgid()!);
  assert.is(await stop(waited, "SIGINT"), 130, waited.stderr());
  const out = JSON.parse(waited.stdout());
  assert.is(out.status, "cancelled");
  assert.is(out.code, "interrupted");
  assert.is(remoteTask(net.bare, out.id).status, "cancelled");
  assert.is(await w.exited, 0, w.stderr());
  assert.match(w.stderr(), `${out.id}: cancelled; stopped the command`);
  await until(() => !alive(pgid()!), "the command's process group to end", 10_000);
});

test("wait --id for someone else's task: exit 7 when its creator cancels it", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  assert.is(cli(["task", "add", "later", "--id", "later", "--push"], { cwd: a, agent: "lead" }).code, 0);
  const waited = start(["wait", "--id", "later", "--json"], { cwd: b, agent: "bob" });
  await until(() => waited.stderr().includes("later: queued"), "the waiter to see the task");
  assert.is(cli(["cancel", "later", "--reason", "not needed after all", "--push"], { cwd: a, agent: "lead" }).code, 0);
  assert.is(await waited.exited, 7, waited.stderr());
  const out = JSON.parse(waited.stdout());
  assert.equal([out.id, out.status, out.failure_reason], ["later", "cancelled", "not needed after all"]);
  const missing = start(["wait", "--id", "no-such-task"], { cwd: b, agent: "bob" });
  assert.is(await missing.exited, 4, missing.stderr());

  // Not the creator: a timeout cannot cancel what someone holds; it says so and exits 8.
  assert.is(cli(["task", "add", "held", "--id", "held", "--push"], { cwd: a, agent: "lead" }).code, 0);
  assert.is(cli(["claim", "held"], { cwd: b, agent: "w@m2" }).code, 0);
  const timed = start(["wait", "--id", "held", "--timeout", "1s"], { cwd: b, agent: "bob" });
  assert.is(await timed.exited, 8, timed.stderr());
  assert.match(timed.stderr(), "held: timed out; it stays claimed with w@m2");
  assert.is(remoteTask(net.bare, "held").status, "claimed");
});

test("wait --id only watches: its --timeout or Ctrl-C leaves someone else's queued task as it is", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  assert.is(cli(["task", "add", "bob's job", "--id", "queued", "--to", "nobody@nowhere", "--push"], { cwd: a, agent: "bob" }).code, 0);
  const timed = start(["wait", "--id", "queued", "--timeout", "1s", "--json"], { cwd: b, agent: "alice" });
  assert.is(await timed.exited, 8, timed.stderr());
  assert.equal([JSON.parse(timed.stdout()).status, JSON.parse(timed.stdout()).code], ["todo", "timed_out"]);
  assert.match(timed.stderr(), "queued: timed out; it stays todo (this wait did not create it: it stopped waiting and cancelled nothing)");
  assert.is(remoteTask(net.bare, "queued").status, "todo");

  const watched = start(["wait", "--id", "queued"], { cwd: b, agent: "alice" });
  await until(() => watched.stderr().includes("queued: queued"), "the waiter to see the task");
  assert.is(await stop(watched, "SIGINT"), 130, watched.stderr());
  assert.match(watched.stderr(), "queued: interrupted; it stays todo");
  assert.is(remoteTask(net.bare, "queued").status, "todo");
});

test("a worker killed -9 mid-task: the lease expires, the task is requeued and finished by another worker", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const c = net.clone("m3");
  // A takeover through the remote waits max_clock_skew past the expiry (60 s by default).
  writeFileSync(join(c, ".handoff.yaml"), "max_clock_skew: 1s\n");
  const { job, pgid } = longJob();
  const first = start(["worker", "--exec", job, "--ttl", "2s", "--poll", "100ms"], { cwd: b, agent: "w1@m2" });
  const waited = start(["wait", "--objective", "survive a crash", "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
  await until(() => pgid() !== null, "the first command to start");
  groups.push(pgid()!);
  first.child.kill("SIGKILL");
  await first.exited;
  killGroup(pgid()!); // its orphaned command, as the machine's reboot would
  const second = start(["worker", "--exec", script(`echo "second worker did it"`), "--once", "--poll", "100ms"], { cwd: c, agent: "w2@m3" });
  assert.is(await waited.exited, 0, waited.stderr() + second.stderr());
  const out = JSON.parse(waited.stdout());
  assert.is(out.output, "second worker did it\n");
  assert.is(await second.exited, 0);
  const t = remoteTask(net.bare, out.id);
  assert.is(t.status, "done");
  assert.is(t.attempts, 1);
  assert.is(t.fence, 2);
});

test("after max_attempts expiries, wait exits 6 with the reason", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  // The waiter counts the worker's expired claim as standing for the takeover grace (clock skew,
  // test/grace-wait.test.ts): kept short here, so the wait sees the task fail well within its timeout.
  writeFileSync(join(a, ".handoff.yaml"), "max_attempts: 1\nmax_clock_skew: 1s\n");
  const { job, pgid } = longJob();
  const w = start(["worker", "--exec", job, "--ttl", "1s", "--poll", "100ms"], { cwd: b, agent: "w1@m2" });
  const waited = start(["wait", "--objective", "crash once", "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
  await until(() => pgid() !== null, "the command to start");
  groups.push(pgid()!);
  w.child.kill("SIGKILL");
  await w.exited;
  killGroup(pgid()!);
  assert.is(await waited.exited, 6, waited.stderr());
  const out = JSON.parse(waited.stdout());
  assert.is(out.status, "failed");
  assert.match(out.failure_reason, "lease expired 1 time without completion (max_attempts 1)");
});

test.run();
