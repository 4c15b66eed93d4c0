// The user-scope hook script finds the repository above the agent's folder without starting git
// in the common cases (a .git folder, or none up to /), and asks git otherwise: it starts the
// hook exactly where a repository using git-handoff is found, wherever git would find it.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { USER_HOOK_SCRIPT } from "../src/setup/user-install.ts";
import { cleanEnv, cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

/** The script, a stand-in git-handoff-hook and a git that logs each start before running the real one. */
function setup() {
  const home = tempDir("handoff-home-");
  const script = join(home, "agent-hook");
  writeFileSync(script, USER_HOOK_SCRIPT);
  chmodSync(script, 0o755);
  const bin = tempDir("handoff-bin-");
  const log = join(bin, "log");
  const realGit = spawnSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).stdout.trim();
  writeFileSync(join(bin, "git"), `#!/bin/sh\necho git >> '${log}'\nexec '${realGit}' "$@"\n`);
  writeFileSync(join(bin, "git-handoff-hook"), `#!/bin/sh\ncat >/dev/null\necho "hook $1" >> '${log}'\n`);
  chmodSync(join(bin, "git"), 0o755);
  chmodSync(join(bin, "git-handoff-hook"), 0o755);
  const run = (dir: string, extra: NodeJS.ProcessEnv = {}) => {
    rmSync(log, { force: true });
    const r = spawnSync(script, ["claude-pre-tool-use"], { cwd: dir, input: "{}", encoding: "utf8", env: cleanEnv({ PATH: `${bin}:${process.env.PATH}`, CLAUDE_PROJECT_DIR: dir, ...extra }) });
    assert.is(r.status, 0, r.stderr);
    return existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : [];
  };
  return { run };
}

test("no git process outside a repository, nor in one that does not use git-handoff", () => {
  const { run } = setup();
  const plain = tempDir();
  mkdirSync(join(plain, "a/b"), { recursive: true });
  assert.equal(run(join(plain, "a/b")), []);
  const repo = tempRepo();
  mkdirSync(join(repo, "src"));
  assert.equal(run(join(repo, "src")), []);
  // A clone's packed refs without handoff refs: still nothing to do.
  writeFileSync(join(repo, ".git/packed-refs"), "# pack-refs with: peeled fully-peeled sorted\n0000000000000000000000000000000000000000 refs/heads/x\n");
  assert.equal(run(repo), []);
});

test("a repository using git-handoff: the hook runs, found through .git, packed refs, a symlinked folder, a linked worktree", () => {
  const { run } = setup();
  const repo = tempRepo();
  mkdirSync(join(repo, "src/deep"), { recursive: true });
  assert.is(cli(["task", "add", "x", "--id", "x"], { cwd: repo, agent: "lead" }).code, 0);
  assert.equal(run(join(repo, "src/deep")), ["hook claude-pre-tool-use"], "found without git");

  // Handoff refs only in packed-refs.
  gitOut(repo, "pack-refs", "--all");
  rmSync(join(repo, ".git/refs/handoff"), { recursive: true, force: true });
  assert.equal(run(repo), ["hook claude-pre-tool-use"]);

  // The agent's folder is a symlink into the repository from elsewhere: judged where it really is.
  const elsewhere = tempDir();
  symlinkSync(join(repo, "src"), join(elsewhere, "link"));
  assert.equal(run(join(elsewhere, "link")), ["hook claude-pre-tool-use"]);
  // And the other way round: a repository without git-handoff reached through a link inside a handoff repo.
  const other = tempRepo();
  symlinkSync(other, join(repo, "other"));
  assert.equal(run(join(repo, "other")), []);

  // A linked worktree has a .git file: git is asked.
  const wt = join(tempDir(), "wt");
  gitOut(repo, "worktree", "add", "-q", wt);
  assert.equal(run(wt), ["git", "hook claude-pre-tool-use"]);

  // GIT_DIR set: only git knows.
  assert.equal(run(join(repo, "src"), { GIT_DIR: join(other, ".git") }), ["git"]);
});

test.run();
