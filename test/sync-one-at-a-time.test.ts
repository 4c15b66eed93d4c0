// The agents of one clone share its refs: syncs that run at once take turns (one lock per clone
// and remote), so the first pushes what all of them had pending and the others push nothing;
// before, each pushed the same writes and made the others' leases lose. A sync that waited for
// one that began after it was asked for does nothing more: that one already did it.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { acquireOwnedLock } from "../src/git/owned-lock.ts";
import { CLI, cleanEnv, cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";

test.after(cleanupTemp);

function syncTraced(cwd: string, trace: string): Promise<number> {
  return syncJson(cwd, trace).then((r) => r.code);
}

function syncJson(cwd: string, trace: string, steps?: string): Promise<{ code: number; json: any }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, "sync", "--json"], { cwd, env: cleanEnv({ HANDOFF_AGENT: "lead", GIT_TRACE: trace, ...(steps ? { HANDOFF_TRACE: steps } : {}) }), stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    p.stdout!.on("data", (b) => (out += b));
    p.on("close", (code) => resolve({ code: code ?? 1, json: out ? JSON.parse(out) : null }));
  });
}

/**
 * Pushes to the remote by every process of the clone, from its traffic log (sync/remote-traffic.ts):
 * a push to a remote on this disk starts no git process (git/path-remote.ts), so GIT_TRACE cannot count it.
 */
const pushesOf = (clone: string) => {
  const log = `${clone}/.git/handoff/traffic-origin.log`;
  return existsSync(log) ? readFileSync(log, "utf8").split("\n").filter((l) => l.endsWith(" push")).length : 0;
};

test("three syncs at once in one clone: one push carries every pending write, the others push nothing", async () => {
  const bare = serveRoot().bare("turns");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const clone = cloneOf(bare);
  for (const id of ["t1", "t2", "t3"]) assert.is(cli(["task", "add", `task ${id}`, "--id", id], { cwd: clone, agent: "lead" }).code, 0);
  const dir = tempDir();
  const traces = [0, 1, 2].map((i) => join(dir, `trace-${i}`));
  const before = pushesOf(clone);
  const codes = await Promise.all(traces.map((t) => syncTraced(clone, t)));
  assert.equal(codes, [0, 0, 0]);
  assert.is(pushesOf(clone) - before, 1, "one push in all");
  for (const id of ["t1", "t2", "t3"]) assert.is(gitOut(bare, "rev-parse", `refs/handoff/tasks/${id}`), gitOut(clone, "rev-parse", `refs/handoff/tasks/${id}`), id);
  assert.equal(gitOut(clone, "status", "--porcelain"), "");
});

test("two syncs that waited: the first syncs, the second (asked before the first began) does nothing more", async () => {
  const bare = serveRoot().bare("coalesce");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const clone = cloneOf(bare);
  assert.is(cli(["task", "add", "pending", "--id", "p1"], { cwd: clone, agent: "lead" }).code, 0);
  // Someone else's sync holds the turn while both are asked for.
  const held = await acquireOwnedLock(`${clone}/.git/handoff/sync-origin.lock`, Date.now() + 5000);
  assert.ok(held.ok);
  const dir = tempDir();
  const before = pushesOf(clone);
  const steps = join(dir, "steps");
  const runs = [syncJson(clone, join(dir, "a"), steps), syncJson(clone, join(dir, "b"), steps)];
  // Both asked before the turn is given back: each has begun its sync (a loaded machine may take
  // seconds to start a process), and then a moment more to reach the turn.
  const started = () => (existsSync(steps) ? readFileSync(steps, "utf8").split("\n").filter((l) => l.endsWith(" sync: start")).length : 0);
  for (const until = Date.now() + 60_000; started() < 2 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
  assert.is(started(), 2, "both syncs began");
  await new Promise((r) => setTimeout(r, 1000));
  if (held.ok) held.release();
  const [a, b] = await Promise.all(runs);
  assert.equal([a!.code, b!.code], [0, 0]);
  const coalesced = [a!.json.coalesced === true, b!.json.coalesced === true];
  assert.equal(coalesced.filter(Boolean).length, 1, JSON.stringify([a!.json, b!.json]));
  assert.is(pushesOf(clone) - before, 1);
  assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/p1"), gitOut(clone, "rev-parse", "refs/handoff/tasks/p1"));
  // Asked for after that sync began: a sync of its own.
  const later = await syncJson(clone, join(dir, "c"));
  assert.is(later.code, 0);
  assert.not.ok(later.json.coalesced);
});

test("a sync with nothing new answers while another holds the turn; one with something to push waits for it", async () => {
  const bare = serveRoot().bare("quiet-turn");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const clone = cloneOf(bare);
  assert.is(cli(["task", "add", "first", "--id", "q1"], { cwd: clone, agent: "lead" }).code, 0);
  const dir = tempDir();
  assert.is((await syncJson(clone, join(dir, "a"))).code, 0);
  assert.is((await syncJson(clone, join(dir, "b"))).json.unchanged, undefined, "the sync that finds nothing leaves the quiet record");
  const held = await acquireOwnedLock(`${clone}/.git/handoff/sync-origin.lock`, Date.now() + 5000);
  assert.ok(held.ok);
  let released = false;
  const release = () => {
    if (held.ok && !released) (released = true), held.release();
  };
  try {
    // Only reads: the listing and this clone's refs are what the last quiet sync saw.
    const t0 = Date.now();
    const quiet = await syncJson(clone, join(dir, "c"));
    assert.is(quiet.code, 0);
    assert.is(quiet.json.unchanged, true, JSON.stringify(quiet.json));
    assert.ok(Date.now() - t0 < 20_000, "did not wait out the turn's budget");
    // A write here: the sync has something to push and takes its turn.
    assert.is(cli(["task", "add", "second", "--id", "q2"], { cwd: clone, agent: "lead" }).code, 0);
    let done = false;
    const pending = syncJson(clone, join(dir, "d")).then((r) => ((done = true), r));
    await new Promise((r) => setTimeout(r, 1500));
    assert.not.ok(done, "a sync with a write to push waits for the turn");
    release();
    const pushed = await pending;
    assert.is(pushed.code, 0);
    assert.ok(pushed.json.pushed.includes("refs/handoff/tasks/q2"), JSON.stringify(pushed.json));
  } finally {
    release();
  }
});

test.run();
