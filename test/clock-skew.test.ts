// Clock skew cannot silently steal a lease. Scripted clocks (HANDOFF_NOW) against a remote over
// smart HTTP, whose Date header is the real time: a clone 12 minutes ahead and one 40 minutes
// behind are refused with clock_skew (exit 3, naming the offset) and doctor says so both ways;
// the offset is also estimated from other agents' commits where the transport shows no time; and
// a takeover of an expired claim waits max_clock_skew past the expiry.
import { writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, handoffRefs, tempRepo } from "./support/repo.ts";
import { storeClaim, storeSync, storeTasks, type Actor } from "./support/seed.ts";
import { cloneOf, serveRoot, twoClonesOverHttp, type GitServer } from "./support/servers.ts";
import { MIN } from "./support/team.ts";

const servers: GitServer[] = [];
test.after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  cleanupTemp();
});

const at = (ms: number) => ({ HANDOFF_NOW: new Date(ms).toISOString() });
/** `agent` in `cwd` at `ms` (--push: `push`): the setup's writes and syncs, in-process (support/seed.ts). */
const by = (cwd: string, agent: string, ms: number, push = false): Actor => ({ cwd, agent, now: new Date(ms).toISOString(), ...(push ? { push } : {}) });
const remoteTasks = (bare: string) => gitOut(bare, "for-each-ref", "--format=%(refname) %(objectname)", "refs/handoff/");

const overHttp = (name: string) => twoClonesOverHttp(name, servers);

test("12 minutes ahead: the takeover of a live 10-minute lease is refused with clock_skew, naming the offset; doctor says ahead", async () => {
  const { bare, a, b } = await overHttp("ahead");
  const now = Date.now();
  await storeTasks(by(b, "lead", now, true), [{ id: "ship", objective: "ship" }]);
  await storeClaim(by(b, "bob", now), "ship", { ttl: "10m" });
  await storeSync(by(a, "alice", now + 12 * MIN));
  const before = remoteTasks(bare);
  const stolen = cli(["claim", "ship", "--json"], { cwd: a, agent: "alice", env: at(now + 12 * MIN) });
  assert.is(stolen.code, 3, stolen.stderr);
  assert.is(stolen.json.error.code, "clock_skew");
  assert.match(stolen.json.error.message, /clock is 12m ahead of the sync remote origin/);
  assert.ok(Math.abs(stolen.json.error.data.offset_ms - 12 * MIN) < 60_000, String(stolen.json.error.data.offset_ms));
  assert.is(remoteTasks(bare), before, "nothing reached the remote");
  assert.is(JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/ship:task.json")).claim.agent, "bob");
  const text = cli(["claim", "ship"], { cwd: a, agent: "alice", env: at(now + 12 * MIN) });
  assert.match(text.stderr, /12m ahead/);
  const doc = cli(["doctor", "--json"], { cwd: a, agent: "alice", env: at(now + 12 * MIN) });
  assert.is(doc.code, 2);
  const clock = doc.json.checks.find((c: any) => c.name === "clock");
  assert.is(clock.status, "fail");
  assert.match(clock.detail, /12m ahead of the sync remote origin/);
  // the honest clone's doctor: within a second or so
  const honest = cli(["doctor", "--json"], { cwd: b, agent: "bob" }).json.checks.find((c: any) => c.name === "clock");
  assert.is(honest.status, "ok", honest.detail);
});

test("40 minutes behind: its claims are refused (the lease would look expired everywhere else); doctor says behind", async () => {
  const { bare, a, b } = await overHttp("behind");
  const now = Date.now();
  await storeTasks(by(b, "lead", now, true), [{ id: "ship", objective: "ship" }]);
  // The task is dated 40 minutes in this clock's future: refused on receive, so the sync exits 3.
  assert.is(cli(["sync"], { cwd: a, agent: "slow", env: at(now - 40 * MIN) }).code, 3);
  const before = remoteTasks(bare);
  // (claim --next would find nothing: what is dated more than 5 minutes in this clock's future is
  // quarantined on receive, so it never sees the task)
  const r = cli(["claim", "ship", "--json"], { cwd: a, agent: "slow", env: at(now - 40 * MIN) });
  assert.is(r.code, 3, r.stderr);
  assert.is(r.json.error.code, "clock_skew");
  assert.match(r.json.error.message, /40m behind/);
  assert.is(remoteTasks(bare), before);
  assert.is(JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/ship:task.json")).status, "todo");
  const clock = cli(["doctor", "--json"], { cwd: a, agent: "slow", env: at(now - 40 * MIN) }).json.checks.find((c: any) => c.name === "clock");
  assert.is(clock.status, "fail");
  assert.match(clock.detail, /40m behind/);
  // the honest clone claims it as usual
  assert.is(cli(["claim", "ship"], { cwd: b, agent: "bob", env: at(now) }).code, 0);
});

test("no server time (a path remote): the offset comes from other agents' commits seen between two syncs", async () => {
  const served = serveRoot();
  const bare = served.bare("commits");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const a = cloneOf(bare);
  const b = cloneOf(bare);
  const T = Date.parse("2026-11-30T09:00:00.000Z");
  await storeTasks(by(b, "lead", T, true), [
    { id: "one", objective: "one" },
    { id: "two", objective: "two" },
  ]);
  // before any sighting: no estimate, and the claim goes through
  const fresh = cli(["doctor", "--json"], { cwd: a, agent: "alice", env: at(T + 12 * MIN) }).json.checks.find((c: any) => c.name === "clock");
  assert.match(fresh.detail, /no estimate/);
  assert.is(cli(["sync"], { cwd: a, agent: "alice", env: at(T + 12 * MIN) }).code, 0);
  // bob's claim lands at T; alice's next sync first sees it, by her clock 12 minutes later
  await storeClaim(by(b, "bob", T), "one", { ttl: "10m" });
  assert.is(cli(["sync"], { cwd: a, agent: "alice", env: at(T + 12 * MIN) }).code, 0);
  const doc = cli(["doctor", "--json"], { cwd: a, agent: "alice", env: at(T + 12 * MIN) }).json.checks.find((c: any) => c.name === "clock");
  assert.is(doc.status, "fail");
  assert.match(doc.detail, /12m ahead of 1 other agent/);
  const before = handoffRefs(bare);
  const r = cli(["claim", "one", "--json"], { cwd: a, agent: "alice", env: at(T + 12 * MIN) });
  assert.is(r.code, 3);
  assert.is(r.json.error.code, "clock_skew");
  assert.is(r.json.error.data.source, "commits");
  assert.is(handoffRefs(bare), before);
});

test("a takeover of another agent's expired claim waits max_clock_skew past the expiry, then goes through", async () => {
  const served = serveRoot();
  const bare = served.bare("grace");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const a = cloneOf(bare);
  const b = cloneOf(bare);
  const T = Date.parse("2026-11-30T09:00:00.000Z");
  await storeTasks(by(b, "lead", T, true), [{ id: "job", objective: "job" }]);
  await storeClaim(by(b, "bob", T), "job", { ttl: "1m" });
  await storeSync(by(a, "alice", T + 90_000));
  // expired 30 s ago by bob's clock: inside the 60 s grace
  const early = cli(["claim", "job", "--json"], { cwd: a, agent: "alice", env: at(T + 90_000) });
  assert.is(early.code, 3, early.stderr);
  assert.is(early.json.error.code, "held_by_other");
  assert.match(early.json.error.message, /expired at .*30s ago, but a takeover waits 60s past the expiry for clock skew/);
  assert.is(early.json.error.data.takeover_grace_ms, 60_000);
  assert.is(JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/job:task.json")).claim.agent, "bob");
  // 70 s past the expiry: taken over, the expiry recorded in the same push
  const late = cli(["claim", "job", "--json"], { cwd: a, agent: "alice", env: at(T + 130_000) });
  assert.is(late.code, 0, late.stderr);
  const remote = JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/job:task.json"));
  assert.is(remote.claim.agent, "alice");
  assert.is(remote.fence, 2);
  // without a remote nothing waits: the holder's own clock is this one
  const solo = tempRepo();
  await storeTasks(by(solo, "lead", T), [{ id: "solo", objective: "solo" }]);
  await storeClaim(by(solo, "bob", T), "solo", { ttl: "1m" });
  assert.is(cli(["claim", "solo"], { cwd: solo, agent: "alice", env: at(T + 61_000) }).code, 0);
});

test("a task handed over from a clone 12 minutes ahead still goes out: a creation takes nothing from anyone, so it needs no clock check", async () => {
  const { bare, a } = await overHttp("creates");
  const ahead = at(Date.now() + 12 * MIN);
  // Its clock is known to be off (the first exclusive grant asked the server's Date)...
  assert.is(cli(["task", "add", "probe", "--id", "probe", "--push"], { cwd: a, agent: "lead", env: ahead }).code, 0);
  const claim = cli(["claim", "probe", "--json"], { cwd: a, agent: "alice", env: ahead });
  assert.is(claim.json.error?.code, "clock_skew", claim.stderr);
  // ...and yet `wait` creates and pushes its task (then times out: no worker here).
  const before = remoteTasks(bare);
  const w = cli(["wait", "--objective", "look at this", "--timeout", "1s", "--json"], { cwd: a, agent: "alice", env: ahead });
  assert.is(w.code, 8, w.stderr);
  assert.is.not(remoteTasks(bare), before);
  assert.is(JSON.parse(gitOut(bare, "show", `refs/handoff/tasks/${w.json.id}:task.json`)).objective, "look at this");
});

test("max_clock_skew is repository policy: a bad value is refused", () => {
  const repo = tempRepo();
  writeFileSync(`${repo}/.handoff.yaml`, "max_clock_skew: soon\n");
  gitOut(repo, "add", ".handoff.yaml");
  gitOut(repo, "commit", "-q", "-m", "policy");
  const r = cli(["tasks"], { cwd: repo, agent: "lead" });
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /max_clock_skew/);
});

test.run();
