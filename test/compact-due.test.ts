// A running process's syncs compact once a finished task comes due, and only then: the finish
// cache it keeps in process (store/archive.ts compactIfDue) says when the first task comes due,
// and after the compaction no sync compacts, pushes or rewrites the cache again.
import { statSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compactIfDue } from "../src/store/archive.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { readTraffic } from "../src/sync/remote-traffic.ts";
import { sync } from "../src/sync/sync.ts";
import { cleanEnv, cleanupTemp, cli, gitOut } from "./support/repo.ts";
import { twoClones } from "./support/servers.ts";

test.after(cleanupTemp);

test("a long-running process compacts a finished task once it comes due, then leaves the cache alone", async () => {
  const { bare, a, b } = twoClones();
  for (const id of ["open", "finished"]) assert.is(cli(["task", "add", `task ${id}`, "--id", id], { cwd: a, agent: "lead" }).code, 0);
  assert.is(cli(["done", "finished"], { cwd: a, agent: "lead" }).code, 0);
  writeFileSync(`${a}/.handoff.yaml`, "retention: 2s\n");
  const store = await openSyncedStore({ cwd: a, agent: "server", env: cleanEnv() });
  try {
    const early = await sync(store);
    assert.equal(early.archived, [], "not due yet");
    assert.equal(early.pushed, ["refs/handoff/tasks/finished", "refs/handoff/tasks/open"]);
    await new Promise((r) => setTimeout(r, 2200));
    // A task another clone added arrives with the same sync that compacts: the cache is read again
    // for it and then loses the archived task, and must not keep saying a task is due.
    assert.is(cli(["task", "add", "late", "--id", "late", "--push"], { cwd: b, agent: "lead" }).code, 0);
    const due = await sync(store);
    assert.equal(due.archived, ["finished"]);
    assert.equal(due.fetched, ["refs/handoff/tasks/late"]);
    assert.is(await compactIfDue(store), null, "nothing is due any more: no compaction is even tried");
    assert.is(gitOut(bare, "for-each-ref", "--format=%(refname)", "refs/handoff/tasks/"), "refs/handoff/tasks/late\nrefs/handoff/tasks/open");
    const cache = `${a}/.git/handoff/compact.json`;
    const before = statSync(cache);
    const from = Date.now() - 1;
    const after = await sync(store);
    assert.equal([after.archived, after.pushed, after.fetched], [[], [], []], "nothing due, nothing to push");
    assert.equal(readTraffic(store, "origin", from).map((c) => c.kind), ["ls-remote"]);
    const now = statSync(cache);
    assert.equal([now.ino, now.mtimeMs], [before.ino, before.mtimeMs], "the finish cache is not rewritten");
  } finally {
    store.close();
  }
});

test.run();
