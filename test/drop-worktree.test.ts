// dropWorktree (git/branch-integrate.ts), what a loop's cleanup removes a unit's worktree with:
// when git refuses to remove it, the folder still goes and git's record of it is pruned, so
// `git worktree list` never names a folder that is gone.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { dropWorktree } from "../src/git/branch-integrate.ts";
import { cleanupTemp, gitOut, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const listed = (repo: string) => gitOut(repo, "worktree", "list", "--porcelain").split("\n").filter((l) => l.startsWith("worktree ")).length - 1;

test("a worktree git removes: gone, and no longer listed", async () => {
  const repo = tempRepo();
  const dir = join(tempDir(), "wt");
  gitOut(repo, "worktree", "add", "-q", "-b", "unit", dir);
  assert.is(listed(repo), 1);
  assert.is(await dropWorktree(repo, dir), true);
  assert.not.ok(existsSync(dir));
  assert.is(listed(repo), 0);
});

test("a worktree git refuses to remove (its .git file gone): the folder goes all the same and git's record of it is pruned", async () => {
  const repo = tempRepo();
  const dir = join(tempDir(), "wt");
  gitOut(repo, "worktree", "add", "-q", "-b", "unit", dir);
  rmSync(join(dir, ".git"));
  assert.is(await dropWorktree(repo, dir), false, "git refused: said so");
  assert.not.ok(existsSync(dir), "the folder is gone");
  assert.is(listed(repo), 0, "and git no longer lists it");
});

test.run();
