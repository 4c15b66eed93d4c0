// Idle workers of one clone share their looks at the remote (a refresh that finds another in
// progress takes that one's result): three of them list the remote about as often as one alone
// would, and they still take every task, each once.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cli } from "./support/repo.ts";
import { remoteForFile, remoteTask, script, start, stop, until } from "./support/handover.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { readTraffic } from "../src/sync/remote-traffic.ts";

const net = remoteForFile(test, "shared-refresh");

/** Reads of the remote (a look is one fetch; a listing where it falls back to one). */
async function listings(clone: string, since: number): Promise<number> {
  const s = await openSyncedStore({ cwd: clone, agent: "count" });
  try {
    return readTraffic(s, "origin", since).filter((c) => c.kind !== "push").length;
  } finally {
    s.close();
  }
}

test("three idle workers in one clone list the remote about as often as one would; every task is done once", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const POLL = 300;
  const worker = (n: string) => start(["worker", "--exec", script(`echo "did $HANDOFF_TASK_ID by ${n}"`), "--poll", `${POLL}ms`], { cwd: b, agent: `${n}@m2` });
  /** Listings of the remote by clone b while these workers idle for 4 s, per second. */
  const idle = async (ws: ReturnType<typeof worker>[]) => {
    await until(() => ws.every((w) => /taking tasks/.test(w.stderr())), "every worker started");
    const from = Date.now();
    await new Promise((r) => setTimeout(r, 4000));
    const rate = (await listings(b, from)) / ((Date.now() - from) / 1000);
    for (const w of ws) assert.is(w.child.exitCode, null, w.stderr());
    return rate;
  };
  // One worker alone first, then three at once: measured alike, so the machine's load cancels out.
  const one = worker("w0");
  const solo = await idle([one]);
  await stop(one);
  const workers = ["w1", "w2", "w3"].map(worker);
  const shared = await idle(workers);
  assert.ok(shared > 0, "someone looked");
  // Unshared, three workers would list about three times as often as one.
  assert.ok(shared <= solo * 1.5 + 0.5, `three idle workers listed ${shared.toFixed(2)}/s, one alone ${solo.toFixed(2)}/s`);

  const ids = ["s1", "s2", "s3", "s4", "s5"];
  for (const id of ids) assert.is(cli(["task", "add", `job ${id}`, "--id", id, "--push"], { cwd: a, agent: "lead" }).code, 0);
  await until(() => ids.every((id) => remoteTask(net.bare, id)?.status === "done"), "every task done", 60_000);
  for (const w of workers) await stop(w);
  // Each task was claimed once, by one of the workers, and no grant expired.
  const claimed = workers.flatMap((w) => [...w.stderr().matchAll(/(s\d): claimed/g)].map((m) => m[1]));
  assert.equal(claimed.sort(), ids);
  for (const id of ids) assert.is(remoteTask(net.bare, id).attempts, 0);
});

test.run();
