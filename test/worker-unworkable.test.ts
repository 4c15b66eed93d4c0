// A task the worker cannot set up (here: a clone with no commit to check a worktree out at) is
// given back once and never taken again by that worker, instead of being claimed on every poll.
import { readdirSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";
import { remoteTask, script, start, stop, until } from "./support/handover.ts";

test.after(cleanupTemp);

test("a worker that cannot set a task up releases it once and does not take it again", async () => {
  const bare = tempDir();
  gitOut(bare, "init", "-q", "--bare");
  const a = tempRepo();
  gitOut(a, "remote", "add", "origin", bare);
  gitOut(a, "push", "-q", "origin", "main");
  assert.is(cli(["task", "add", "needs a checkout", "--id", "t1", "--push"], { cwd: a, agent: "lead" }).code, 0);
  // A clone whose remote HEAD names no branch: nothing is checked out, no commit to base a worktree on.
  gitOut(bare, "symbolic-ref", "HEAD", "refs/heads/nothing-here");
  const b = tempDir();
  gitOut(b, "clone", "-q", bare, ".");
  const tmp = tempDir("handoff-worker-tmp-");
  const w = start(["worker", "--exec", script("echo done"), "--poll", "100ms"], { cwd: b, agent: "w@m2", env: { TMPDIR: tmp } });
  await until(() => /will not take it again/.test(w.stderr()), "the task given back", 60_000);
  // Twenty polls later it has still been claimed only once.
  await new Promise((r) => setTimeout(r, 2000));
  assert.is(await stop(w), 130);
  assert.is((w.stderr().match(/t1: claimed/g) ?? []).length, 1, w.stderr());
  const t = remoteTask(bare, "t1");
  assert.is(t.status, "todo", "released for another worker");
  assert.is(t.claim, null);
  // The task's folder (the sender's context and files) went with it, though no worktree was made.
  assert.equal(readdirSync(tmp).filter((n) => n.startsWith("handoff-t1-")), []);
});

test.run();
