// The push budget: writes that need not go out at once (renewals, heartbeats) are coalesced into
// one atomic push and spend at most handoff.maxPushesPerMinute pushes a minute of the clone (the
// scripted clock decides what "a minute" is); exclusive grants and writes someone waits on push at
// once and carry whatever is pending; a push that fails loses nothing.
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Store } from "../src/store/store.ts";
import { claim, done, renew } from "../src/store/task-actions.ts";
import { addTask, taskRef } from "../src/store/task-store.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { flushPending, queuedRefs } from "../src/sync/pending-push.ts";
import { pushBudget } from "../src/sync/push-budget.ts";
import { readTraffic } from "../src/sync/remote-traffic.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";

const T0 = Date.parse("2026-03-01T10:00:00Z");
const at = (sec: number) => new Date(T0 + sec * 1000).toISOString();

let opened: Store[] = [];
async function storeAt(cwd: string, sec: number, agent = "w@m1"): Promise<Store> {
  const s = await openSyncedStore({ cwd, agent, env: { ...process.env, HANDOFF_NOW: at(sec) } });
  s.syncOptions = { ...s.syncOptions, push: true };
  opened.push(s);
  return s;
}

/** A bare remote with `n` tasks t1..tn and a clone of it that has synced them. */
async function setup(n: number, max = 2): Promise<{ bare: string; clone: string }> {
  const served = serveRoot();
  const bare = served.bare("budget");
  const seed = tempRepo();
  gitOut(seed, "push", "-q", bare, "main");
  const clone = cloneOf(bare);
  gitOut(clone, "config", "handoff.maxPushesPerMinute", String(max));
  // Set up two minutes before the scripted clock's start: the setup's push is outside every window.
  const s = await openSyncedStore({ cwd: clone, agent: "lead", env: { ...process.env, HANDOFF_NOW: at(-120) } });
  for (let i = 1; i <= n; i++) await addTask(s, { id: `t${i}`, objective: `task ${i}`, priority: 0, scope: [], maxAttempts: 3 });
  s.close();
  const r = cli(["sync"], { cwd: clone, agent: "lead", env: { HANDOFF_NOW: at(-120) } });
  assert.is(r.code, 0, r.stderr);
  return { bare, clone };
}

const remoteTip = (bare: string, ref: string) => gitOut(bare, "for-each-ref", "--format=%(objectname)", ref) || null;
/** Pushes this clone made since the scripted clock's start (the setup's come before). */
const pushes = (s: Store) => readTraffic(s, "origin", T0).filter((c) => c.kind === "push").length;

test.after.each(() => {
  for (const s of opened) s.close();
  opened = [];
});
test.after(() => cleanupTemp());

test("deferrable writes spend at most the budget's pushes a minute; the rest wait, coalesced, for the next minute", async () => {
  const { bare, clone } = await setup(2);
  const s = await storeAt(clone, 10);
  await claim(s, "t1", { ttl: "30m" }); // exclusive: pushed at once, and counted
  assert.is(pushes(s), 1);
  await renew(s, "t1", { defer: true }); // budget 2: one left, so it goes now
  assert.is(pushes(s), 2);
  assert.is(remoteTip(bare, taskRef("t1")), await s.readRef(taskRef("t1")));
  // The minute's budget is spent: these land here and wait.
  await renew(s, "t1", { defer: true });
  await renew(s, "t1", { defer: true });
  assert.is(pushes(s), 2);
  assert.equal(queuedRefs(s, "origin"), [taskRef("t1")]);
  assert.is.not(remoteTip(bare, taskRef("t1")), await s.readRef(taskRef("t1")));
  const b = await pushBudget(s, "origin");
  assert.is(b.allows, false);
  assert.is(b.used, 2);
  assert.is(b.freeAt, T0 + 10_000 + 60_000);
  // Still inside the minute (by the scripted clock): nothing goes.
  const early = await storeAt(clone, 69);
  assert.is((await flushPending(early, "origin")).kind, "deferred");
  assert.is(pushes(s), 2);
  // A minute later one push carries both renewals (the ref's latest value).
  const later = await storeAt(clone, 71);
  const f = await flushPending(later, "origin");
  assert.is(f.kind, "pushed");
  assert.is(pushes(later), 3);
  assert.is(remoteTip(bare, taskRef("t1")), await later.readRef(taskRef("t1")));
  assert.equal(queuedRefs(later, "origin"), []);
});

test("an exclusive grant and a completion someone waits on push at once over a spent budget, carrying what is pending", async () => {
  const { bare, clone } = await setup(3, 1);
  const s = await storeAt(clone, 10);
  await claim(s, "t1", { ttl: "30m" });
  await renew(s, "t1", { defer: true }); // budget 1, spent by the claim: queued
  assert.equal(queuedRefs(s, "origin"), [taskRef("t1")]);
  assert.is(pushes(s), 1);
  const renewed = await s.readRef(taskRef("t1"));
  // The claim of t2 cannot wait: it goes now, and the renewal of t1 rides in the same push.
  await claim(s, "t2", { ttl: "30m" });
  assert.is(pushes(s), 2);
  assert.is(remoteTip(bare, taskRef("t2")), await s.readRef(taskRef("t2")));
  assert.is(remoteTip(bare, taskRef("t1")), renewed);
  assert.equal(queuedRefs(s, "origin"), []);
  // A completion under a spent budget is not held back either.
  await done(s, "t2");
  assert.is(pushes(s), 3);
  assert.is(remoteTip(bare, taskRef("t2")), await s.readRef(taskRef("t2")));
});

test("a coalesced push is atomic, and nothing is lost when it fails", async () => {
  const { bare, clone } = await setup(3, 1);
  const s = await storeAt(clone, 10);
  await claim(s, "t1", { ttl: "30m" });
  await claim(s, "t2", { ttl: "30m" });
  await renew(s, "t1", { defer: true });
  await renew(s, "t2", { defer: true });
  const local1 = await s.readRef(taskRef("t1"));
  const local2 = await s.readRef(taskRef("t2"));
  const remote1 = remoteTip(bare, taskRef("t1"));
  assert.equal(queuedRefs(s, "origin"), [taskRef("t1"), taskRef("t2")]);
  // Another clone moves t2 on the remote: the lease on t2 fails, so t1 must not land either.
  const other = cloneOf(bare);
  assert.is(cli(["sync"], { cwd: other, agent: "x", env: { HANDOFF_NOW: at(20) } }).code, 0);
  assert.is(cli(["depend", "t2", "--on", "t3"], { cwd: other, agent: "x", env: { HANDOFF_NOW: at(20) } }).code, 0);
  assert.is(cli(["sync"], { cwd: other, agent: "x", env: { HANDOFF_NOW: at(20) } }).code, 0);
  const moved2 = remoteTip(bare, taskRef("t2"));
  const later = await storeAt(clone, 80);
  const f = await flushPending(later, "origin");
  assert.is(f.kind, "failed");
  assert.is(remoteTip(bare, taskRef("t1")), remote1, "atomic: t1 did not land without t2");
  assert.is(remoteTip(bare, taskRef("t2")), moved2);
  assert.is(await later.readRef(taskRef("t1")), local1);
  assert.is(await later.readRef(taskRef("t2")), local2);
  assert.equal(queuedRefs(later, "origin"), [taskRef("t1"), taskRef("t2")]);
  // A remote that refuses every push (a hook): still nothing lost.
  const hook = join(bare, "hooks", "pre-receive");
  writeFileSync(hook, "#!/bin/sh\necho 'closed for maintenance'\nexit 1\n");
  chmodSync(hook, 0o755);
  const closed = await storeAt(clone, 200);
  assert.is((await flushPending(closed, "origin", { urgent: true })).kind, "failed");
  assert.is(await closed.readRef(taskRef("t1")), local1);
  assert.equal(queuedRefs(closed, "origin"), [taskRef("t1"), taskRef("t2")]);
  rmSync(hook);
  // sync replays both writes on what the remote has and pushes them.
  const r = cli(["sync"], { cwd: clone, agent: "w@m1", env: { HANDOFF_NOW: at(300) } });
  assert.is(r.code, 0, r.stderr);
  const after = await storeAt(clone, 300);
  assert.is(remoteTip(bare, taskRef("t1")), local1);
  assert.is(remoteTip(bare, taskRef("t2")), await after.readRef(taskRef("t2")));
  assert.is.not(remoteTip(bare, taskRef("t2")), moved2);
  // The queue forgets what is on the remote now.
  assert.is((await flushPending(after, "origin", { urgent: true })).kind, "none");
  assert.equal(queuedRefs(after, "origin"), []);
});

test("a bad handoff.maxPushesPerMinute is a clear error", async () => {
  const { clone } = await setup(1);
  gitOut(clone, "config", "handoff.maxPushesPerMinute", "lots");
  const s = await storeAt(clone, 10);
  try {
    await pushBudget(s, "origin");
    assert.unreachable("accepted");
  } catch (e) {
    assert.match((e as Error).message, /handoff\.maxPushesPerMinute must be a whole number/);
  }
});

test("a running store follows a budget changed while it runs", async () => {
  const { clone } = await setup(1);
  const s = await storeAt(clone, 10);
  try {
    const first = (await pushBudget(s, "origin")).max;
    gitOut(clone, "config", "handoff.maxPushesPerMinute", String(first + 5));
    assert.is((await pushBudget(s, "origin")).max, first + 5);
  } finally {
    s.close();
  }
});

test.run();
