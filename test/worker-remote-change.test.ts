// A worker that runs while its team moves to a dedicated coordination remote (`git handoff remote
// --url` in its clone) takes the next tasks from the new remote: it followed the old remote's
// queue for its life, so tasks pushed to the new one were never seen until it was restarted.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";
import { remoteTask, script, start, stop, until } from "./support/handover.ts";

test.after(cleanupTemp);

function bareRepo(): string {
  const bare = tempDir("handoff-bare-");
  gitOut(bare, "init", "-q", "--bare", "-b", "main");
  return bare;
}

test("a running worker takes tasks from the sync remote its clone moved to", async () => {
  const old = bareRepo();
  const coord = bareRepo();
  const a = tempRepo();
  gitOut(a, "remote", "add", "origin", old);
  gitOut(a, "push", "-q", "origin", "main");
  const b = tempDir("handoff-worker-clone-");
  gitOut(b, "clone", "-q", old, ".");
  const w = start(["worker", "--exec", script("echo done"), "--poll", "100ms"], { cwd: b, agent: "w@m2" });
  try {
    assert.is(cli(["task", "add", "before the move", "--id", "t1", "--push"], { cwd: a, agent: "lead" }).code, 0);
    await until(() => /t1: done/.test(w.stderr()), "t1 done through the old remote", 60_000);
    assert.is(remoteTask(old, "t1").status, "done");

    // Both clones move; the lead publishes its state to the new remote.
    for (const c of [a, b]) assert.is(cli(["remote", "--url", coord], { cwd: c, agent: "lead" }).code, 0);
    assert.is(cli(["sync"], { cwd: a, agent: "lead" }).code, 0);
    assert.is(cli(["task", "add", "after the move", "--id", "t2", "--push"], { cwd: a, agent: "lead" }).code, 0);
    await until(() => /t2: done/.test(w.stderr()), "t2 done through the new remote", 60_000);
    assert.match(w.stderr(), /the sync remote is now coord/);
    assert.is(remoteTask(coord, "t2").status, "done");
    assert.is(gitOut(old, "for-each-ref", "--format=%(refname)", "refs/handoff/tasks/t2"), "", "nothing of t2 on the old remote");
  } finally {
    await stop(w);
  }
});

test.run();
