// The worker removes a task's worktree and folder after the result has gone out (a waiter does not
// wait for the clean-up), and before it counts the task as over: a `--once` worker leaves neither
// behind when it exits. Real processes, one remote over smart HTTP.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { gitOut, tempDir } from "./support/repo.ts";
import { remoteForFile, POLL, remoteTask, script, start } from "./support/handover.ts";

const net = remoteForFile(test, "cleanup");

test("a --once worker sends the result, then removes the task's worktree and folder before it exits", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const seen = join(tempDir("handoff-cleanup-"), "where");
  const w = start(["worker", "--exec", script(`pwd > ${seen}; echo "$HANDOFF_OUT_DIR" >> ${seen}; echo done it`), "--once", "--poll", POLL], { cwd: b, agent: "codex@m2" });
  const waited = start(["wait", "--objective", "clean up after yourself", "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
  assert.is(await waited.exited, 0, waited.stderr());
  const out = JSON.parse(waited.stdout());
  assert.is(out.status, "done");
  assert.is(await w.exited, 0, w.stderr());
  const [worktree, outDir] = readFileSync(seen, "utf8").trim().split("\n");
  assert.ok(worktree && outDir, "the command said where it ran");
  assert.not.ok(existsSync(worktree!), "the worktree is gone");
  assert.not.ok(existsSync(join(outDir!, "..")), "the task's folder is gone");
  assert.not.match(gitOut(b, "worktree", "list"), worktree!);
  assert.is(remoteTask(net.bare, out.id).status, "done");
});

test.run();
