// Two workers on two machines racing for the same queue through one remote over smart HTTP:
// claims are exclusive, so every task runs exactly once.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cli, gitOut, seedTasks, tempDir } from "./support/repo.ts";
import { remoteForFile, script, start, stop, until } from "./support/handover.ts";

const net = remoteForFile(test, "race");

test("two workers on two clones, 20 tasks: each done exactly once", async () => {
  const a = net.clone("m1");
  const ids = Array.from({ length: 20 }, (_, i) => `r${String(i).padStart(2, "0")}`);
  // The queue is set up in-process (the store's own task add): `task add` is not what is tested here.
  await seedTasks(a, ids.map((id) => ({ id, objective: `job ${id}` })));
  assert.is(cli(["sync"], { cwd: a, agent: "lead" }).code, 0);
  const log = join(tempDir(), "runs");
  const job = script(`echo "$HANDOFF_TASK_ID" >> "${log}"; echo "ran $HANDOFF_TASK_ID"`);
  const workers = [
    start(["worker", "--exec", job, "--concurrency", "3", "--poll", "100ms"], { cwd: net.clone("m2"), agent: "w1@m2" }),
    start(["worker", "--exec", job, "--concurrency", "3", "--poll", "100ms"], { cwd: net.clone("m3"), agent: "w2@m3" }),
  ];
  const doneOnRemote = () => {
    const lines = gitOut(net.bare, "for-each-ref", "--format=%(refname)", "refs/handoff/results/").split("\n").filter(Boolean);
    return lines.length;
  };
  await until(() => doneOnRemote() === 20, "20 results on the remote", 150_000);
  for (const w of workers) assert.is(await stop(w), 130, w.stderr());
  const runs = readFileSync(log, "utf8").trim().split("\n").sort();
  assert.equal(runs, ids, "each task ran exactly once");
  for (const id of ids) {
    const t = JSON.parse(gitOut(net.bare, "show", `refs/handoff/tasks/${id}:task.json`));
    assert.is(t.status, "done", id);
    // Granted once, unless a worker gave the task back before running it (a step before the
    // command failed, as a loaded machine can make one time out: "released for another worker"),
    // which its log says; a second grant without that is a double grant.
    if (t.fence !== 1) {
      const logs = workers.map((w) => w.stderr()).join("\n");
      const mine = logs.split("\n").filter((l) => l.includes(id)).join("\n");
      assert.match(logs, new RegExp(`${id}: released for another worker`), `${id} was granted ${t.fence} times without a release:\n${mine}`);
      assert.is(t.fence, 2, `${id}: one release, one grant more:\n${mine}`);
    }
    const r = JSON.parse(gitOut(net.bare, "show", `refs/handoff/results/${id}:result.json`));
    assert.is(r.output, `ran ${id}\n`);
  }
  const by = (w: string) => ids.filter((id) => JSON.parse(gitOut(net.bare, "show", `refs/handoff/results/${id}:result.json`)).worker === w).length;
  assert.is(by("w1@m2") + by("w2@m3"), 20);
});

test.run();
