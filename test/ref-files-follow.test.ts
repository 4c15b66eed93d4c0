// A long-running process's listing of a followed ref folder (RefFiles.listFollowed) patched in
// place when refs move: moves show at once, refs that come or go show, a lock file that comes and
// goes changes nothing (the very same listing, which callers key their caches on).
import { writeFileSync, rmSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { RefFiles } from "../src/git/ref-files.ts";
import { cleanupTemp, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

async function settled<T>(f: () => T, ok: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 30_000;
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

test.run();
