// The worker's own behaviour around a task: code changes sent back as a branch, and a clean stop
// on Ctrl-C that gives its task back. Real processes, one remote over smart HTTP.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut } from "./support/repo.ts";
import { httpRemote, remoteTask, script, start, stop, type Machines } from "./support/handover.ts";

let net: Machines;
test.before(async () => {
  net = await httpRemote("worker");
});
test.after(async () => {
  await net.server.stop();
  cleanupTemp();
});

test("--push-branch: code changes come back as the branch handoff/<id> on the remote", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const w = start(["worker", "--exec", script(`echo "new code" > feature.txt; echo "wrote it"`), "--once", "--push-branch", "--poll", "100ms"], { cwd: b, agent: "codex@m2" });
  const waited = start(["wait", "--objective", "add the feature", "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
  assert.is(await waited.exited, 0, waited.stderr());
  const out = JSON.parse(waited.stdout());
  assert.is(out.branch, `handoff/${out.id}`);
  assert.is(gitOut(net.bare, "rev-parse", `refs/heads/handoff/${out.id}`), out.commit);
  assert.is(gitOut(net.bare, "show", `${out.commit}:feature.txt`), "new code");
  assert.is(gitOut(net.bare, "rev-parse", `${out.commit}^`), gitOut(a, "rev-parse", "main"));
  assert.is(remoteTask(net.bare, out.id).result.commit, out.commit);
  await w.exited;
  // Nothing changed: no branch.
  const w2 = start(["worker", "--exec", script(`echo "read only"`), "--once", "--push-branch", "--poll", "100ms"], { cwd: b, agent: "codex@m2" });
  const plain = start(["wait", "--objective", "just look", "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
  assert.is(await plain.exited, 0, plain.stderr());
  assert.is(JSON.parse(plain.stdout()).branch, null);
  await w2.exited;
});

test("Ctrl-C stops a worker cleanly, its task released", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const marker = join(b, "started");
  const job = script(`touch "${marker}"; sleep 30; echo never`);
  assert.is(cli(["task", "add", "long", "job", "--id", "long", "--push"], { cwd: a, agent: "alice" }).code, 0);
  const w = start(["worker", "--exec", job, "--poll", "100ms"], { cwd: b, agent: "codex@m2" });
  const t0 = Date.now();
  while (!existsSync(marker) && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 50));
  assert.ok(existsSync(marker), w.stderr());
  assert.is(await stop(w, "SIGINT"), 130, w.stderr());
  assert.match(w.stderr(), "long: stopped the command and released the task");
  const t = remoteTask(net.bare, "long");
  assert.is(t.status, "todo");
  assert.is(t.claim, null);
});

test.run();
