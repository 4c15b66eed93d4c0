// The Store a long-running front end shares (store/fresh-store.ts): the same Store while nothing it
// took in at open changed; a new one, with the new policy, once the integration branch's
// .handoff.yaml, this worktree's, the checked-out branch or .git/config changed; the one it
// replaced still usable by a call that holds it.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { FreshStore } from "../src/store/fresh-store.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanEnv, cleanupTemp, gitOut, repoWithPolicy } from "./support/repo.ts";

test.after(cleanupTemp);

test("reopened when what it took in changed, and only then", async () => {
  const { repo, worktree: wt } = repoWithPolicy("max_concurrent: 3\n");
  let opened = 0;
  const fresh = new FreshStore(() => (opened++, openSyncedStore({ cwd: wt, agent: "dash", env: cleanEnv() })), 50);
  try {
    const first = await fresh.get();
    assert.is(first.config.maxConcurrent, 3);
    assert.is(await fresh.get(), first, "nothing changed: the same Store");
    gitOut(repo, "update-ref", "refs/handoff/tasks/x", gitOut(repo, "rev-parse", "HEAD")); // coordination writes change nothing it took in
    assert.is(await fresh.get(), first);
    gitOut(repo, "pack-refs", "--all"); // nor does packing (sync packs every few hundred writes)
    assert.is(await fresh.get(), first);

    writeFileSync(join(repo, ".handoff.yaml"), "max_concurrent: 2\n");
    gitOut(repo, "commit", "-q", "-am", "policy: fewer"); // on main, from the other worktree
    const second = await fresh.get();
    assert.is.not(second, first);
    assert.is(second.config.maxConcurrent, 2);

    gitOut(wt, "config", "handoff.remoteTimeout", "30s");
    const third = await fresh.get();
    assert.is.not(third, second, ".git/config changed");
    fresh.invalidate();
    const fourth = await fresh.get();
    assert.is.not(fourth, third, "invalidated");
    assert.is(opened, 4);
    // A replaced Store still answers for a while: a call may hold it.
    assert.ok(await first.readRef("refs/handoff/tasks/x"));
  } finally {
    fresh.close();
  }
});

test("sameAsLast: the Store the last get() returned, without a second check within one call's span; after it or after invalidate(), a get()", async () => {
  const { worktree: wt } = repoWithPolicy("max_concurrent: 3\n");
  let opened = 0;
  const fresh = new FreshStore(() => (opened++, openSyncedStore({ cwd: wt, agent: "dash", env: cleanEnv() })), 50, 200);
  try {
    const first = await fresh.sameAsLast();
    assert.is(opened, 1, "none yet: a get()");
    gitOut(wt, "config", "handoff.remoteTimeout", "30s");
    assert.is(await fresh.sameAsLast(), first, "not checked again (the call's get() did, a moment ago)");
    const second = await fresh.get();
    assert.is.not(second, first, "get() checks");
    fresh.invalidate();
    const third = await fresh.sameAsLast();
    assert.is.not(third, second, "invalidated (another agent name adopted): opened again");
    assert.is(opened, 3);
    // A check longer ago than one call's span is made again (a call that never asked for the Store).
    gitOut(wt, "config", "handoff.remoteTimeout", "20s");
    await new Promise((r) => setTimeout(r, 250));
    const fourth = await fresh.sameAsLast();
    assert.is.not(fourth, third, "checked again: .git/config changed meanwhile");
    assert.is(opened, 4);
  } finally {
    fresh.close();
  }
});

test.run();
