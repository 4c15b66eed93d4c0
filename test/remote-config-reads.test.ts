// A claim through the sync remote reads the settings it needs (the remote, its ref prefix, the
// per-call deadline, this clone's machine) from git's config files without starting git, or,
// where a file is beyond that reader (an include), with one `git config` call; counted from git's
// own trace of the real process; the values take effect either way.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempDir } from "./support/repo.ts";
import { twoClones } from "./support/servers.ts";

test.after(cleanupTemp);

/** The `git config` calls of one claim of `id` in `a`, from git's trace; the claim must succeed. */
function claimConfigCalls(a: string, id: string, agent: string): string[] {
  const trace = join(tempDir("handoff-config-reads-"), "trace");
  const r = cli(["claim", id, "--json"], { cwd: a, agent, env: { GIT_TRACE: trace } });
  assert.is(r.code, 0, r.stderr);
  // Addressed to @m9: granted only because handoff.machine was read.
  assert.is(JSON.parse(r.stdout).claim.agent, agent);
  return readFileSync(trace, "utf8").split("\n").filter((l) => /trace: built-in: git config\b/.test(l));
}

test("claim through the remote: the remote, its deadline and the machine read from the files (no git config), or with one call", () => {
  const { bare, a } = twoClones();
  gitOut(a, "config", "handoff.machine", "m9");
  gitOut(a, "config", "handoff.remoteTimeout", "30s");
  for (const id of ["c1", "c3"]) assert.is(cli(["task", "add", "for m9", "--id", id, "--to", "@m9", "--push"], { cwd: a, agent: "lead" }).code, 0);
  assert.equal(claimConfigCalls(a, "c1", "worker-1"), []);
  assert.is(gitOut(bare, "for-each-ref", "--format=%(refname)", "refs/handoff/tasks/c1"), "refs/handoff/tasks/c1");
  // An include is git's to follow: the remote's settings are asked of git then (the changed
  // config file also makes the claim read the repository's policy again), and still take effect.
  gitOut(a, "config", "include.path", join(tempDir(), "more.config"));
  const calls = claimConfigCalls(a, "c3", "worker-2");
  assert.ok(calls.some((c) => /--get-regexp .*handoff\\\.machine/.test(c)), calls.join("\n"));
  assert.is(gitOut(bare, "for-each-ref", "--format=%(refname)", "refs/handoff/tasks/c3"), "refs/handoff/tasks/c3");
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
