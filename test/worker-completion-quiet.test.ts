// While a worker's completion push is on its way (someone may be waiting on it), the worker does
// nothing that competes with it: no look at the remote for a cancel (the command has ended, a
// cancel can no longer stop it), and the task's worktree is removed only once the push is over.
// The remote's pre-receive hook holds the completion push for two seconds to watch that window.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cli, tempDir } from "./support/repo.ts";
import { remoteForFile, remoteTask, script, start, stop, until } from "./support/handover.ts";
import { remoteHook } from "./support/servers.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { readTraffic } from "../src/sync/remote-traffic.ts";

const net = remoteForFile(test, "completion-quiet");

test("during its completion push a worker reads nothing from the remote and keeps the task's worktree until the push is over", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const marks = tempDir("handoff-marks-");
  const held = join(marks, "completion-held");
  // Only the push that brings a result (the completion) is held; the claim goes through at once.
  remoteHook(net.bare, "pre-receive", `if grep -q ' refs/handoff/results/' ; then touch '${held}'; sleep 2; fi; exit 0`);
  const ranIn = join(marks, "ran-in");
  const worker = start(["worker", "--exec", script(`pwd > '${ranIn}'; echo done`), "--poll", "200ms"], { cwd: b, agent: "codex@m2" });
  try {
    await until(() => /taking tasks/.test(worker.stderr()), "the worker started");
    assert.is(cli(["task", "add", "quick job", "--id", "q1", "--push"], { cwd: a, agent: "lead" }).code, 0);
    await until(() => existsSync(held), "the completion push reached the remote", 30_000);
    const from = Date.now();
    const worktree = readFileSync(ranIn, "utf8").trim();
    // Ten of the worker's polls go by while the push is held.
    await new Promise((r) => setTimeout(r, 1500));
    assert.ok(existsSync(worktree), `the task's worktree ${worktree} is removed only after the completion push`);
    const s = await openSyncedStore({ cwd: b, agent: "count" });
    const reads = readTraffic(s, "origin", from).filter((c) => c.kind !== "push");
    s.close();
    assert.equal(reads, [], "no look at the remote while the completion push is on its way");
    await until(() => remoteTask(net.bare, "q1")?.status === "done", "the task done on the remote", 30_000);
    await until(() => !existsSync(worktree), "the worktree removed after the push", 30_000);
  } finally {
    await stop(worker);
  }
});

test.run();
