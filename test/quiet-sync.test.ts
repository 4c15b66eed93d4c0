// A sync with nothing new goes by what the last sync that found nothing to do saw (the remote's
// listing and a stamp of this clone's refs: src/sync/quiet-sync.ts) and reads no refs. Each way
// the state can move must send the next sync the whole way: a change on the remote, a local
// write, a tracking ref removed by hand, refs packed, a finished task coming due for the archive,
// a damaged file.
import { readFileSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openSyncedStore } from "../src/sync/open.ts";
import { sync, type SyncReport } from "../src/sync/sync.ts";
import { cleanEnv, cleanupTemp, cli, gitOut } from "./support/repo.ts";
import { twoClones } from "./support/servers.ts";

test.after(cleanupTemp);

/** One sync from a store of its own (as a one-shot command), at `now` when given. */
async function syncOnce(cwd: string, now?: Date): Promise<SyncReport> {
  const store = await openSyncedStore({ cwd, agent: "lead", env: cleanEnv(now ? { HANDOFF_NOW: now.toISOString() } : {}) });
  try {
    return await sync(store);
  } finally {
    store.close();
  }
}

/** Syncs until one finds nothing to do, then checks that the next goes the remembered way. */
async function settle(cwd: string, why: string): Promise<void> {
  const full = await syncOnce(cwd);
  assert.not.ok(full.unchanged, `${why}: the first sync after a change reads the refs`);
  assert.equal([full.fetched, full.pushed, full.archived], [[], [], []], `${why}: nothing left to do`);
  const quiet = await syncOnce(cwd);
  assert.ok(quiet.unchanged, `${why}: then the next one goes by what it saw`);
  assert.equal([quiet.fetched, quiet.pushed, quiet.replayed, quiet.removed, quiet.archived, quiet.rounds], [[], [], [], [], [], 1]);
}

const add = (cwd: string, id: string, ...more: string[]) => assert.is(cli(["task", "add", `task ${id}`, "--id", id, ...more], { cwd, agent: "lead" }).code, 0);

test("a sync with nothing new reads no refs, and every change on either side sends the next one the whole way", async () => {
  const { bare, a, b } = twoClones();
  writeFileSync(`${a}/.handoff.yaml`, "retention: 1h\n");
  add(a, "first");
  assert.is(cli(["done", "first"], { cwd: a, agent: "lead" }).code, 0);
  const pushed = await syncOnce(a);
  assert.equal(pushed.pushed, ["refs/handoff/tasks/first"]);
  assert.not.ok(pushed.unchanged);
  await settle(a, "after a push");

  // Another clone's task on the remote.
  add(b, "theirs", "--push");
  const fetched = await syncOnce(a);
  assert.not.ok(fetched.unchanged);
  assert.equal(fetched.fetched, ["refs/handoff/tasks/theirs"]);
  await settle(a, "after a fetch");

  // A write in this clone not yet pushed.
  add(a, "mine");
  const mine = await syncOnce(a);
  assert.equal(mine.pushed, ["refs/handoff/tasks/mine"]);
  await settle(a, "after a local write");

  // A tracking ref removed by hand: the whole way, which fetches it back.
  gitOut(a, "update-ref", "-d", "refs/handoff-remotes/origin/tasks/theirs");
  const back = await syncOnce(a);
  assert.not.ok(back.unchanged);
  assert.is(gitOut(a, "rev-parse", "refs/handoff-remotes/origin/tasks/theirs"), gitOut(bare, "rev-parse", "refs/handoff/tasks/theirs"));
  await settle(a, "after a tracking ref was removed");

  // Refs packed (packed-refs is a new file): the same refs, read again once.
  gitOut(a, "pack-refs", "--all");
  await settle(a, "after the refs were packed");

  // A damaged file is no answer.
  const file = `${a}/.git/handoff/sync-origin.quiet`;
  assert.ok(readFileSync(file, "utf8").startsWith('{"format":1,'));
  writeFileSync(file, "not json\n");
  await settle(a, "after the file was damaged");

  // The finished task comes due for the archive (retention 1h): the whole way, which archives it.
  const later = await syncOnce(a, new Date(Date.now() + 2 * 3600_000));
  assert.not.ok(later.unchanged);
  assert.equal(later.archived, ["first"]);
});

test("through the CLI: --json says when a sync went by what the last one saw, the text is as before", async () => {
  const { a, b } = twoClones();
  add(a, "one", "--push");
  add(b, "two", "--push");
  const first = cli(["sync", "--json"], { cwd: a, agent: "lead" });
  assert.is(first.code, 0, first.stderr);
  assert.equal([JSON.parse(first.stdout).fetched, JSON.parse(first.stdout).unchanged], [["refs/handoff/tasks/two"], undefined]);
  assert.is(JSON.parse(cli(["sync", "--json"], { cwd: a, agent: "lead" }).stdout).unchanged, undefined, "this one found nothing to do");
  const quiet = cli(["sync", "--json"], { cwd: a, agent: "lead" });
  assert.is(quiet.code, 0, quiet.stderr);
  assert.is(JSON.parse(quiet.stdout).unchanged, true);
  assert.match(cli(["sync"], { cwd: a, agent: "lead" }).stdout, /^synced with origin: 0 updated here, 0 pushed, 0 replayed, 0 archived elsewhere\n$/);
});

test.run();
