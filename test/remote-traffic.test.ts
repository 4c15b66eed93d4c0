// What a clone asks of its sync remote is counted (stats reports pushes, ls-remotes and fetches
// per minute), and sync packs the loose refs it leaves behind without losing or changing any.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { addTask } from "../src/store/task-store.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { looseHandoffRefs, PACK_LOOSE_AT } from "../src/sync/pack-refs.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";

const NOW = "2026-03-01T10:00:00Z";
test.after(() => cleanupTemp());

function remoteAndClone(): { bare: string; clone: string } {
  const bare = serveRoot().bare("traffic");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  return { bare, clone: cloneOf(bare) };
}

test("stats reports the clone's pushes, ls-remotes and fetches per minute and its push budget", async () => {
  const { clone } = remoteAndClone();
  gitOut(clone, "config", "handoff.maxPushesPerMinute", "4");
  const env = { HANDOFF_NOW: NOW };
  const add = cli(["task", "add", "one", "--push"], { cwd: clone, agent: "lead", env });
  assert.is(add.code, 0, add.stderr);
  const id = add.stdout.trim();
  const c = cli(["claim", id], { cwd: clone, agent: "a1", env });
  assert.is(c.code, 0, c.stderr);
  assert.is(cli(["sync"], { cwd: clone, agent: "a1", env }).code, 0);
  const r = cli(["stats", "--json"], { cwd: clone, agent: "a1", env });
  assert.is(r.code, 0, r.stderr);
  const t = r.json.remote;
  assert.is(t.remote, "origin");
  // task add --push and the claim pushed; sync had nothing to push. Sync listed the remote.
  assert.is(t.pushes, 2);
  assert.ok(t.ls_remotes >= 1, JSON.stringify(t));
  // All on one scripted instant: the rates are over one minute.
  assert.is(t.window_minutes, 1);
  assert.is(t.pushes_per_minute, 2);
  assert.is(t.pushes_last_minute, 2);
  assert.is(t.max_pushes_per_minute, 4);
  const text = cli(["stats"], { cwd: clone, agent: "a1", env });
  assert.match(text.stdout, /sync remote origin\s+2 pushes\/min, \d+(\.\d+)? ls-remotes\/min/);
  // Its value starts in the column of every other row's (29: two spaces, a 26-wide label, a space).
  for (const row of ["sync remote origin", "push budget", "refused on receive"]) assert.match(text.stdout, new RegExp(`^  ${row} {${27 - row.length}}\\S`, "m"), row);
  assert.match(text.stdout, /push budget\s+2 of 4 pushes in the last minute/);
  // An hour later the minute's pushes no longer count against the budget.
  const later = cli(["stats", "--json"], { cwd: clone, agent: "a1", env: { HANDOFF_NOW: "2026-03-01T10:30:00Z" } });
  assert.is(later.json.remote.pushes_last_minute, 0);
  assert.is(later.json.remote.window_minutes, 30);
});

test("sync packs the loose refs it leaves behind, and every ref keeps its value", async () => {
  const { bare, clone } = remoteAndClone();
  const s = await openSyncedStore({ cwd: clone, agent: "lead", warm: true, env: { ...process.env, HANDOFF_NOW: NOW } });
  const n = PACK_LOOSE_AT / 2 + 10; // each task is a ref and, once synced, a tracking ref
  for (let i = 0; i < n; i++) await addTask(s, { id: `p${i}`, objective: `task ${i}`, priority: 0, scope: [], maxAttempts: 3 });
  s.close();
  const before = gitOut(clone, "for-each-ref", "--format=%(objectname) %(refname)", "refs/handoff/");
  const branches = gitOut(clone, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/", "refs/remotes/");
  assert.ok(looseHandoffRefs(s) > 0);
  const r = cli(["sync"], { cwd: clone, agent: "lead", env: { HANDOFF_NOW: NOW } });
  assert.is(r.code, 0, r.stderr);
  assert.is(looseHandoffRefs(s, 10_000), 0, "no loose refs under refs/handoff* after sync");
  const packed = readFileSync(join(clone, ".git", "packed-refs"), "utf8");
  assert.ok(packed.includes("refs/handoff/tasks/p0") && packed.includes("refs/handoff-remotes/origin/tasks/p0"));
  const after = gitOut(clone, "for-each-ref", "--format=%(objectname) %(refname)", "refs/handoff/");
  assert.is(after, before);
  assert.is(gitOut(clone, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/", "refs/remotes/"), branches);
  // Every task reached the remote, and the tracking refs agree with it.
  const remote = gitOut(bare, "for-each-ref", "--format=%(objectname) %(refname)", "refs/handoff/");
  assert.is(remote, after);
  const tracking = gitOut(clone, "for-each-ref", "--format=%(objectname) %(refname)", "refs/handoff-remotes/origin/").replaceAll("refs/handoff-remotes/origin/", "refs/handoff/");
  assert.is(tracking, after);
  // Packed refs read and write as before: a claim through the remote, then a sync with nothing new.
  const c = cli(["claim", "p3"], { cwd: clone, agent: "a1", env: { HANDOFF_NOW: NOW } });
  assert.is(c.code, 0, c.stderr);
  assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/p3"), gitOut(clone, "rev-parse", "refs/handoff/tasks/p3"));
  const again = cli(["sync", "--json"], { cwd: clone, agent: "a1", env: { HANDOFF_NOW: NOW } });
  assert.is(again.code, 0, again.stderr);
  assert.equal(again.json.pushed, []);
  assert.ok(existsSync(join(clone, ".git", "packed-refs")));
});

test("a clone with few loose refs is not packed", async () => {
  const { clone } = remoteAndClone();
  assert.is(cli(["task", "add", "one"], { cwd: clone, agent: "lead", env: { HANDOFF_NOW: NOW } }).code, 0);
  assert.is(cli(["sync"], { cwd: clone, agent: "lead", env: { HANDOFF_NOW: NOW } }).code, 0);
  const packed = existsSync(join(clone, ".git", "packed-refs")) ? readFileSync(join(clone, ".git", "packed-refs"), "utf8") : "";
  assert.not.ok(packed.includes("refs/handoff/"));
});

test.run();
