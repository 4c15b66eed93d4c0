// A sync reads the remote's listing before it takes the clone's sync turn (a sync with nothing new
// answers from it without the turn: src/sync/sync.ts). When there is something to do, that listing
// is kept after the turn only while this clone's refs are as they were: the sync that held the
// turn meanwhile may have pushed, which moves the tracking refs past what the listing shows (and
// leaves no fetch's mark, by which a listing older than a fetch is read again). Kept anyway, the
// listing was older than the tracking refs it was compared with.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { acquireOwnedLock } from "../src/git/owned-lock.ts";
import { cleanupTemp, cli, cliAsync, gitOut, tempDir } from "./support/repo.ts";
import { twoClones } from "./support/servers.ts";

test.after(cleanupTemp);

test("a listing read before the turn, overtaken by the push of the sync that held it, is read again: the pushed task stays", async () => {
  const { bare, a } = twoClones();
  const ok = (args: string[]) => assert.is(cli(args, { cwd: a, agent: "lead" }).code, 0, args.join(" "));
  ok(["task", "add", "one", "--id", "one", "--push"]);
  ok(["sync"]);
  ok(["sync"]);
  ok(["task", "add", "three", "--id", "three"]);
  // Another sync of the clone holds the turn while this one reads the listing and waits.
  const held = await acquireOwnedLock(`${a}/.git/handoff/sync-origin.lock`, Date.now() + 5000);
  assert.ok(held.ok);
  const steps = join(tempDir(), "steps");
  const waiting = cliAsync(["sync", "--json"], { cwd: a, agent: "lead", env: { HANDOFF_TRACE: steps } });
  for (const until = Date.now() + 60_000; !(existsSync(steps) && readFileSync(steps, "utf8").includes("sync: start")) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 1000));
  // What that sync does with the turn: push three and move its tracking ref (as sync.ts does).
  const three = gitOut(a, "rev-parse", "refs/handoff/tasks/three");
  gitOut(a, "push", "-q", bare, "refs/handoff/tasks/three:refs/handoff/tasks/three");
  gitOut(a, "update-ref", "refs/handoff-remotes/origin/tasks/three", three);
  if (held.ok) held.release();
  const out = await waiting;
  assert.is(out.code, 0, out.stdout + out.stderr);
  const report = JSON.parse(out.stdout);
  // Read again, the listing has three as this clone has it: nothing to push or remove. (Kept, the
  // stale listing lacked it: pushed again here, and where the ref's family is validated, a value
  // older than its tracking ref was refused as rewritten history.)
  assert.equal([report.pushed, report.removed, report.quarantined], [[], [], []], out.stdout);
  assert.is(gitOut(a, "rev-parse", "refs/handoff/tasks/three"), three, "the pushed task is still here");
  assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/three"), three);
});

test("a sync that waited for the turn reads the listing after it: what another clone pushed meanwhile is fetched", async () => {
  // The sync that waited marks the clone synced as of when it took the turn, and a sync of the
  // clone asked before that goes by its work (coalesced, sync-one-at-a-time.test.ts). Kept, the
  // listing read before the wait missed the push: that sync, asked after it, said it had nothing
  // left to do, and the clone lacked the task (seen 3 times in 6 with two syncs waiting).
  const { a, b } = twoClones();
  const ok = (cwd: string, args: string[]) => assert.is(cli(args, { cwd, agent: "lead" }).code, 0, args.join(" "));
  ok(a, ["task", "add", "one", "--id", "one", "--push"]);
  ok(b, ["sync"]);
  ok(a, ["task", "add", "local", "--id", "local"]); // something to push: the sync is not a quiet one
  const held = await acquireOwnedLock(`${a}/.git/handoff/sync-origin.lock`, Date.now() + 10_000);
  assert.ok(held.ok);
  const steps = join(tempDir(), "steps");
  const waiting = cliAsync(["sync", "--json"], { cwd: a, agent: "lead", env: { HANDOFF_TRACE: steps } });
  for (const until = Date.now() + 60_000; !(existsSync(steps) && readFileSync(steps, "utf8").includes("sync: start")) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 1000)); // its listing read, the turn waited for
  ok(b, ["task", "add", "new", "--id", "new", "--push"]);
  if (held.ok) held.release();
  const out = await waiting;
  assert.is(out.code, 0, out.stderr);
  assert.equal(out.json.fetched, ["refs/handoff/tasks/new"], out.stdout);
  assert.equal(out.json.pushed, ["refs/handoff/tasks/local"], out.stdout);
  assert.is(gitOut(a, "rev-parse", "refs/handoff/tasks/new"), gitOut(b, "rev-parse", "refs/handoff/tasks/new"));
});

test("a sync whose listing was slow marks the clone synced as of when it asked: a sync asked after a push that listing missed syncs itself", async () => {
  // The remote answers listings late, from refs read when asked (a slow link). The first sync asks,
  // another clone pushes y, a second sync is asked; the first's listing comes (without y), the
  // turn is free, it syncs. Marked synced as of taking the turn, the second coalesced on it and
  // the clone lacked y.
  const { a, b } = twoClones();
  const ok = (cwd: string, args: string[]) => assert.is(cli(args, { cwd, agent: "lead" }).code, 0, args.join(" "));
  ok(a, ["task", "add", "one", "--id", "one", "--push"]);
  ok(b, ["sync"]);
  ok(a, ["sync"]);
  const slow = join(tempDir(), "slow-upload-pack");
  const asked = join(tempDir(), "asked");
  writeFileSync(slow, `#!/bin/sh\n: > "${asked}"\ngit-upload-pack "$@" | { sleep 2; cat; }\n`);
  chmodSync(slow, 0o755);
  gitOut(a, "config", "remote.origin.uploadpack", slow);
  gitOut(a, "config", "protocol.version", "0"); // the refs advertised as upload-pack starts
  ok(b, ["task", "add", "x", "--id", "x", "--push"]);
  const first = cliAsync(["sync", "--json"], { cwd: a, agent: "lead" });
  // Its listing asked for (the remote's upload-pack started), then a moment for it to read the refs.
  for (const until = Date.now() + 60_000; !existsSync(asked) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 300));
  ok(b, ["task", "add", "y", "--id", "y", "--push"]);
  const second = cliAsync(["sync", "--json"], { cwd: a, agent: "lead" });
  const [one, two] = await Promise.all([first, second]);
  assert.is(one.code, 0, one.stderr);
  assert.is(two.code, 0, two.stderr);
  assert.equal(one.json.fetched, ["refs/handoff/tasks/x"], one.stdout);
  assert.is(gitOut(a, "for-each-ref", "--format=%(refname)", "refs/handoff/tasks/y"), "refs/handoff/tasks/y", two.stdout);
});

test.run();
