// A long-running process's listing of a followed ref folder (RefFiles.listFollowed) patched in
// place when refs move: moves show at once, refs that come or go show, a lock file that comes and
// goes changes nothing (the very same listing, which callers key their caches on).
import { writeFileSync, rmSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { RefFiles } from "../src/git/ref-files.ts";
import { cleanupTemp, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

async function settled<T>(f: () => T, ok: (v: T) => boolean, within = 30_000): Promise<T> {
  const deadline = Date.now() + within;
  for (;;) {
    await new Promise((r) => setTimeout(r, 5));
    const v = f();
    if (ok(v) || Date.now() > deadline) return v;
  }
}

test("moves, new refs, removed refs and lock files, as other processes make them", async () => {
  const repo = tempRepo();
  const c1 = gitOut(repo, "commit-tree", "-m", "one", gitOut(repo, "mktree"));
  const c2 = gitOut(repo, "commit-tree", "-m", "two", gitOut(repo, "mktree"));
  for (const n of ["a", "b", "c"]) gitOut(repo, "update-ref", `refs/handoff/tasks/${n}`, c1);
  const refs = new RefFiles(`${repo}/.git`);
  const list = () => refs.listFollowed("refs/handoff/tasks/");
  const first = list();
  assert.equal(first.map((t) => `${t.name.slice(19)}:${t.oid === c1}`), ["a:true", "b:true", "c:true"]);
  assert.is(list(), first, "unchanged: the same array");

  gitOut(repo, "update-ref", "refs/handoff/tasks/b", c2, c1);
  const moved = await settled(list, (l) => l[1]!.oid === c2);
  assert.equal(moved.map((t) => t.oid), [c1, c2, c1]);
  assert.is.not(moved, first);
  assert.equal(first.map((t) => t.oid), [c1, c1, c1], "the earlier listing is left as it was");

  writeFileSync(`${repo}/.git/refs/handoff/tasks/c.lock`, c2 + "\n");
  rmSync(`${repo}/.git/refs/handoff/tasks/c.lock`);
  await new Promise((r) => setTimeout(r, 50));
  assert.is(list(), moved, "a lock file that came and went changes nothing");

  gitOut(repo, "update-ref", "refs/handoff/tasks/aa", c2);
  const added = await settled(list, (l) => l.length === 4);
  assert.equal(added.map((t) => t.name.slice(19)), ["a", "aa", "b", "c"]);
  gitOut(repo, "update-ref", "-d", "refs/handoff/tasks/a");
  const removed = await settled(list, (l) => l.length === 3);
  assert.equal(removed.map((t) => `${t.name.slice(19)}:${t.oid === c2}`), ["aa:true", "b:true", "c:false"]);
  refs.close();
});

// Found by a running MCP server beside one-shot commands at 1,000 tasks: `git pack-refs` had
// removed every sub-folder of refs/handoff/, so the root was followed as a flat folder; a claim
// then made refs/handoff/tasks/ again, the watch named only the new folder, and the root's listing
// kept the packed (old) value of the claimed task, so every sync after failed with lost_race.
test("a followed folder that gains a sub-folder is walked in full from then on", async () => {
  const repo = tempRepo();
  const c1 = gitOut(repo, "commit-tree", "-m", "one", gitOut(repo, "mktree"));
  const c2 = gitOut(repo, "commit-tree", "-m", "two", gitOut(repo, "mktree"));
  for (const n of ["a", "b"]) gitOut(repo, "update-ref", `refs/handoff/tasks/${n}`, c1);
  gitOut(repo, "pack-refs", "--all");
  const refs = new RefFiles(`${repo}/.git`);
  const list = () => refs.listFollowed("refs/handoff/");
  assert.equal(list().map((t) => `${t.name.slice(13)}:${t.oid === c1}`), ["tasks/a:true", "tasks/b:true"]);

  gitOut(repo, "update-ref", "refs/handoff/tasks/a", c2, c1); // a loose file in a new sub-folder, over the packed value
  // Well before the watch's own full walk every 10 s (FULL_EVERY_MS), which would hide the fault.
  const moved = await settled(list, (l) => l[0]!.oid === c2, 3_000);
  assert.equal(moved.map((t) => `${t.name.slice(13)}:${t.oid === c2}`), ["tasks/a:true", "tasks/b:false"]);
  gitOut(repo, "update-ref", "refs/handoff/agents/x", c2); // and another sub-folder, later
  const added = await settled(list, (l) => l.length === 3, 3_000);
  assert.equal(added.map((t) => t.name.slice(13)), ["agents/x", "tasks/a", "tasks/b"]);
  refs.close();
});

test.run();
