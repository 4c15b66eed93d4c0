// Repository discovery's refusals: a layout git refuses is refused here too, as not_a_repo (exit
// 2) with what to do, never an unexpected error and never acted on.
import { chownSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("a linked worktree whose main repository was moved: not_a_repo, exit 2, with git worktree repair", () => {
  const repo = tempRepo();
  const linked = join(tempDir(), "linked");
  gitOut(repo, "worktree", "add", "-q", linked, "-b", "feat");
  assert.is(cli(["task", "add", "before the move", "--id", "t1"], { cwd: linked, agent: "a1" }).code, 0);
  renameSync(repo, `${repo}-moved`);
  for (const args of [["status"], ["task", "list"], ["claim", "t1"]]) {
    const r = cli([...args, "--json"], { cwd: linked, agent: "a1" });
    assert.is(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.not.match(r.stderr, /unexpected error/);
    assert.is(r.json.error.code, "not_a_repo");
    assert.match(r.json.error.suggestions[0].detail, `git worktree repair ${linked}`);
  }
  const text = cli(["status"], { cwd: linked, agent: "a1" });
  assert.is(text.code, 2);
  assert.match(text.stderr, /does not exist/);
  assert.match(text.stderr, /git worktree repair/);
});

test("a work tree whose top folder another user owns (.git still ours): refused as git refuses it, unless safe.directory allows it", () => {
  // Only root can give a folder away (CI runs as root): without it this test fails, it does not pass unseen.
  assert.is(process.getuid?.(), 0, "this test needs root, to chown a folder to another user");
  const repo = tempRepo();
  assert.is(cli(["task", "add", "x", "--id", "t1"], { cwd: repo, agent: "a1" }).code, 0);
  chownSync(repo, 65534, 65534);
  const global = join(tempDir(), "gitconfig");
  writeFileSync(global, "");
  const env = { GIT_CONFIG_GLOBAL: global };
  for (const args of [["claim", "t1"], ["lease", "a"], ["status"]]) {
    const r = cli([...args, "--json"], { cwd: repo, agent: "a1", env });
    assert.is(r.code, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assert.is(r.json.error.code, "not_a_repo");
    assert.match(r.json.error.message, /dubious ownership/);
    assert.is(r.json.error.suggestions[0].detail, `if you trust it: git config --global --add safe.directory ${repo}`);
  }
  for (const allowed of [repo, "*"]) {
    writeFileSync(global, `[safe]\n\tdirectory = ${allowed}\n`);
    const r = cli(["task", "list", "--json"], { cwd: repo, agent: "a1", env });
    assert.is(r.code, 0, `safe.directory = ${allowed}: ${r.stderr}`);
  }
  assert.is(cli(["claim", "t1"], { cwd: repo, agent: "a1", env }).code, 0, "claimed once allowed");
});

test.run();
