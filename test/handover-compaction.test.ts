// A handed-over task's inputs and results leave with it when compaction archives it: the refs go
// in the same atomic push as the archive, here and on the remote, and other clones drop them at
// their next sync. A task still within the retention keeps its files. Scripted clock throughout.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, gitOut } from "./support/repo.ts";
import { remoteForFile, POLL, script, start } from "./support/handover.ts";

const net = remoteForFile(test, "compaction");

const day = 24 * 3600_000;
// Ten days back from the real clock: the HTTP server's Date header tells a clone how far off it is.
const T0 = Math.floor(Date.now() / 60_000) * 60_000 - 10 * day;
const at = (ms: number) => ({ HANDOFF_NOW: new Date(T0 + ms).toISOString() });
const refsOf = (repo: string, id: string) => gitOut(repo, "for-each-ref", "--format=%(refname)", `refs/handoff/tasks/${id}`, `refs/handoff/inputs/${id}`, `refs/handoff/results/${id}`);
const all = (id: string) => `refs/handoff/inputs/${id}\nrefs/handoff/results/${id}\nrefs/handoff/tasks/${id}`;

/** `wait` in clone a with an input file, a worker in clone b sending a result file back, both at `now`. */
async function handOver(a: string, b: string, env: NodeJS.ProcessEnv): Promise<string> {
  const w = start(["worker", "--exec", script(`echo result > "$HANDOFF_OUT_DIR/r.txt"; echo ok`), "--once", "--poll", POLL], { cwd: b, agent: "codex@m2", env });
  const waited = start(["wait", "--objective", "with files", "--file", "in.txt", "--timeout", "60s", "--json"], { cwd: a, agent: "alice", env });
  assert.is(await waited.exited, 0, waited.stderr());
  assert.is(await w.exited, 0, w.stderr());
  return JSON.parse(waited.stdout()).id;
}

test("compaction deletes the inputs and results of the tasks it archives, locally, on the remote, then in other clones", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  // The scripted clock is days from the HTTP server's: allow it, or every grant is clock_skew.
  for (const clone of [a, b]) writeFileSync(join(clone, ".handoff.yaml"), "max_clock_skew: 30d\n");
  writeFileSync(join(a, "in.txt"), "input\n");
  const old = await handOver(a, b, at(0));
  const recent = await handOver(a, b, at(5 * day));
  for (const id of [old, recent]) {
    assert.is(refsOf(net.bare, id), all(id));
    assert.is(refsOf(a, id), all(id));
  }
  assert.is(cli(["sync"], { cwd: b, env: at(5 * day) }).code, 0);
  assert.is(refsOf(b, old), all(old), "the worker's clone has the inputs and results too");

  // Eight days after the first: past the default retention of 7 days for it, not for the second.
  const c = cli(["compact", "--json"], { cwd: a, env: at(8 * day) });
  assert.is(c.code, 0, c.stderr);
  assert.equal(JSON.parse(c.stdout).archived, [old]);
  assert.is(refsOf(net.bare, old), "", "gone from the remote");
  assert.is(refsOf(a, old), "", "gone here");
  assert.is(refsOf(net.bare, recent), all(recent), "a task within the retention keeps its files");
  assert.is(refsOf(a, recent), all(recent));
  // One push: the archive commit and the deletions landed together.
  assert.ok(gitOut(net.bare, "show", "-s", "--format=%B", "refs/handoff/archive").includes(old));
  assert.ok(gitOut(net.bare, "show", "refs/handoff/archive:" + `${old}.json`).includes('"status": "done"'));

  const s = cli(["sync", "--json"], { cwd: b, env: at(8 * day) });
  assert.is(s.code, 0, s.stderr);
  const removed: string[] = JSON.parse(s.stdout).removed;
  for (const ref of all(old).split("\n")) assert.ok(removed.includes(ref), `${ref} removed by b's sync: ${removed}`);
  assert.is(refsOf(b, old), "", "the other clone dropped them");
  assert.is(refsOf(b, recent), all(recent));
  const again = cli(["compact", "--json"], { cwd: a, env: at(8 * day) });
  assert.equal(JSON.parse(again.stdout).archived, [], "nothing left to compact");
});

test.run();
