// A repository reached only through GIT_DIR and GIT_WORK_TREE (the "dotfiles" layout: the git dir
// kept apart from its work tree). Every command works on that repository, as plain git does.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempDir } from "./support/repo.ts";

test.after(cleanupTemp);

test("init, task add, claim, lease, status and doctor in a git dir apart from its work tree: exit 0, written to that git dir", () => {
  const base = tempDir();
  const gitDir = join(base, "repo.git");
  const home = join(base, "home");
  mkdirSync(home);
  gitOut(base, "init", "-q", "--bare", "-b", "main", gitDir);
  gitOut(base, "--git-dir", gitDir, "config", "core.bare", "false");
  writeFileSync(join(home, "a"), "a\n");
  gitOut(home, "--git-dir", gitDir, "--work-tree", home, "add", "a");
  gitOut(home, "--git-dir", gitDir, "--work-tree", home, "commit", "-qm", "init");
  const at = { cwd: home, agent: "alice", env: { GIT_DIR: gitDir, GIT_WORK_TREE: home } };
  for (const args of [["init"], ["task", "add", "fix it", "--id", "t1"], ["claim", "t1"], ["lease", "a"], ["status"], ["doctor"]]) {
    const r = cli(args, at);
    assert.is(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
    assert.not.match(r.stderr, /unexpected error|not a git repository/);
  }
  const refs = gitOut(base, "--git-dir", gitDir, "for-each-ref", "--format=%(refname)", "refs/handoff/");
  assert.match(refs, /^refs\/handoff\/tasks\b/m);
  assert.match(refs, /^refs\/handoff\/leases\b/m);
  assert.ok(gitOut(base, "--git-dir", gitDir, "config", "handoff.version"), "init's mark in that repository");
  assert.ok(existsSync(join(gitDir, "hooks/pre-commit")), "git's hooks installed in that git dir");
  assert.not.ok(existsSync(join(home, ".git")), "no other repository made in the work tree");
  const claimed = cli(["task", "list", "--json"], at);
  assert.is(claimed.code, 0, claimed.stderr);
  const [task] = claimed.json as { status: string; claim: { agent: string } }[];
  assert.is(task!.status, "claimed");
  assert.is(task!.claim.agent, "alice");
});

test.run();
