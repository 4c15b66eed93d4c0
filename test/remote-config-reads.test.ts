// A claim through the sync remote reads the settings it needs (the remote, its ref prefix, the
// per-call deadline, this clone's machine) with one `git config` call, counted from git's own
// trace of the real process; the values still take effect.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempDir } from "./support/repo.ts";
import { twoClones } from "./support/servers.ts";

test.after(cleanupTemp);

test("claim through the remote: one git config call for the remote, its deadline and the machine", () => {
  const { bare, a } = twoClones();
  gitOut(a, "config", "handoff.machine", "m9");
  gitOut(a, "config", "handoff.remoteTimeout", "30s");
  assert.is(cli(["task", "add", "for m9", "--id", "c1", "--to", "@m9", "--push"], { cwd: a, agent: "lead" }).code, 0);
  const trace = join(tempDir("handoff-config-reads-"), "trace");
  const r = cli(["claim", "c1", "--json"], { cwd: a, agent: "worker", env: { GIT_TRACE: trace } });
  assert.is(r.code, 0, r.stderr);
  // Addressed to @m9: granted only because handoff.machine was read.
  assert.is(JSON.parse(r.stdout).claim.agent, "worker");
  const configCalls = readFileSync(trace, "utf8").split("\n").filter((l) => /trace: built-in: git config\b/.test(l));
  assert.is(configCalls.length, 1, configCalls.join("\n"));
  assert.match(configCalls[0]!, /handoff\\\.machine/);
  assert.is(gitOut(bare, "for-each-ref", "--format=%(refname)", "refs/handoff/tasks/c1"), "refs/handoff/tasks/c1");
});

test("a bad handoff.remoteTimeout read with the remote's settings is still refused by name", () => {
  const { a } = twoClones();
  assert.is(cli(["task", "add", "x", "--id", "c2", "--push"], { cwd: a, agent: "lead" }).code, 0);
  gitOut(a, "config", "handoff.remoteTimeout", "soon");
  const r = cli(["claim", "c2"], { cwd: a, agent: "worker" });
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /handoff\.remoteTimeout/);
});

test.run();
