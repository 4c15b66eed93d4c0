// `git handoff test`: every link ✓ against a working remote (probe ref pushed, read back and
// removed; agents seen; a round trip through a worker), exit 3 naming the link with its fix when
// the remote's pre-receive rejects, and when no worker answers the round trip.
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";
import { remoteForFile, POLL, script, start, stop, until } from "./support/handover.ts";

const net = remoteForFile(test, "link-test");

/** A bare remote by path and one clone of it. */
function pathRemote(): { bare: string; clone: string } {
  const root = tempDir("handoff-linktest-");
  const bare = join(root, "r.git");
  gitOut(root, "init", "-q", "--bare", bare);
  const clone = tempRepo();
  gitOut(clone, "remote", "add", "origin", bare);
  gitOut(clone, "push", "-q", "origin", "main");
  gitOut(clone, "config", "handoff.machine", "m1");
  return { bare, clone };
}

test("a working remote: every line ✓, the probe ref is gone afterwards, exit 0", () => {
  const { bare, clone } = pathRemote();
  const r = cli(["test"], { cwd: clone, agent: "alice" });
  assert.is(r.code, 0, r.stdout + r.stderr);
  for (const name of ["remote", "fetch", "push", "read back", "remove"]) assert.match(r.stdout, `✓ ${name}: `);
  assert.not.match(r.stdout, "✗");
  assert.match(r.stdout, /round trip \d+ ms/);
  assert.is(gitOut(bare, "for-each-ref", "refs/handoff/"), "");
  const j = cli(["test", "--json"], { cwd: clone, agent: "alice" });
  assert.is(j.code, 0);
  assert.is(j.json.ok, true);
  assert.equal(j.json.checks.map((c: any) => c.name), ["remote", "fetch", "push", "read back", "remove"]);
});

test("a remote whose pre-receive rejects: ✗ push with the remote's words and a fix, exit 3, nothing left behind", () => {
  const { bare, clone } = pathRemote();
  const hook = join(bare, "hooks", "pre-receive");
  writeFileSync(hook, "#!/bin/sh\necho 'pushes are closed today' >&2\nexit 1\n");
  chmodSync(hook, 0o755);
  const r = cli(["test"], { cwd: clone, agent: "alice" });
  assert.is(r.code, 3, r.stdout + r.stderr);
  assert.match(r.stdout, "✓ fetch: ");
  assert.match(r.stdout, /✗ push: origin refused the probe ref refs\/handoff\/inputs\/probe-m1-\S+: .*pushes are closed today/);
  assert.match(r.stdout, /\n    fix: check your write access/);
  const j = cli(["test", "--json"], { cwd: clone, agent: "alice" });
  assert.is(j.code, 3);
  assert.is(j.json.ok, false);
  assert.equal(j.json.checks.filter((c: any) => !c.ok).map((c: any) => c.name), ["push"]);
  assert.is(gitOut(bare, "for-each-ref", "refs/handoff/"), "");
});

test("no sync remote: ✗ remote with the fix, exit 3", () => {
  const r = cli(["test"], { cwd: tempRepo(), agent: "alice" });
  assert.is(r.code, 3);
  assert.match(r.stdout, "✗ remote: this clone has no sync remote");
  assert.match(r.stdout, "fix: git remote add origin URL");
});

test("--round-trip ADDR: a worker on the other machine answers; it is listed with its heartbeat", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const w = start(["worker", "--exec", script("echo OK"), "--poll", POLL], { cwd: b, agent: "codex@m2" });
  try {
    await until(() => w.stderr().includes("taking tasks"), "the worker to start");
    const r = cli(["test", "--round-trip", "codex@m2", "--timeout", "60s"], { cwd: a, agent: "alice" });
    assert.is(r.code, 0, r.stdout + r.stderr + w.stderr());
    assert.match(r.stdout, /✓ round trip: round trip to codex@m2: t-\S+ done in \d+ ms/);
    assert.match(r.stdout, /  codex@m2 on m2: active, last heartbeat \d+ s ago/);
  } finally {
    await stop(w);
  }
  // Nobody there: ✗ round trip, the probe task cancelled, exit 3.
  const r = cli(["test", "--round-trip", "gemini@m9", "--timeout", "2s", "--json"], { cwd: a, agent: "alice" });
  assert.is(r.code, 3);
  const trip = r.json.checks.find((c: any) => c.name === "round trip");
  assert.is(trip.ok, false);
  assert.match(trip.detail, "nobody finished");
  assert.match(trip.fix, "git handoff worker");
});

test("bad input: a malformed --round-trip address is refused before anything is pushed", () => {
  const { bare, clone } = pathRemote();
  const r = cli(["test", "--round-trip", "a@b@c", "--json"], { cwd: clone, agent: "alice" });
  assert.is(r.code, 2);
  assert.is(gitOut(bare, "for-each-ref", "refs/handoff/"), "");
});

test.run();
