// git's own hooks, installed by `git handoff init` and run by real `git commit` / `git push`, and
// init / uninstall themselves: idempotent, dry-run, merged configs, kept hooks, husky/lefthook.
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, cleanEnv, cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

/**
 * A PATH with `git-handoff` on it, so `git handoff ...` works inside git's hooks. Not from
 * tempDir(): uvu imports every test file before earlier files' test.after(cleanupTemp) runs, and
 * that cleanup would delete this folder (the hooks then find no git-handoff and fail open).
 */
const BIN = (() => {
  const dir = mkdtempSync(join(tmpdir(), "handoff-bin-"));
  test.after(() => rmSync(dir, { recursive: true, force: true }));
  symlinkSync(CLI, join(dir, "git-handoff"));
  return dir;
})();

function gitAs(cwd: string, agent: string, ...args: string[]) {
  const env = cleanEnv({
    PATH: `${BIN}:${process.env.PATH}`,
    HANDOFF_AGENT: agent,
    GIT_AUTHOR_NAME: agent,
    GIT_AUTHOR_EMAIL: "a@a",
    GIT_COMMITTER_NAME: agent,
    GIT_COMMITTER_EMAIL: "a@a",
  });
  const r = spawnSync("git", args, { cwd, env, encoding: "utf8" });
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

function write(repo: string, path: string, text = "x\n") {
  mkdirSync(join(repo, path, ".."), { recursive: true });
  writeFileSync(join(repo, path), text);
}

function initRepo(): string {
  const repo = tempRepo();
  write(repo, "src/api/old.ts");
  write(repo, "src/shared.ts");
  gitOut(repo, "add", "-A");
  gitOut(repo, "commit", "-qm", "files");
  const r = cli(["init"], { cwd: repo, agent: "lead" });
  assert.is(r.code, 0, r.stderr);
  assert.is(cli(["lease", "src/api/**", "--exclusive", "--task", "api"], { cwd: repo, agent: "alice" }).code, 0);
  assert.is(cli(["lease", "src/shared.ts"], { cwd: repo, agent: "alice" }).code, 0);
  return repo;
}

test("pre-commit refuses staged files inside another agent's exclusive lease, renames on both sides", () => {
  const repo = initRepo();
  write(repo, "src/api/users.ts");
  gitOut(repo, "add", "src/api/users.ts");
  const r = gitAs(repo, "bob", "commit", "-qm", "users");
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /deny: src\/api\/users\.ts is inside an exclusive lease on src\/api\/\*\* held by alice \(task api\)/);
  assert.match(r.stderr, /commit refused/);
  gitOut(repo, "reset", "-q");

  gitOut(repo, "mv", "src/api/old.ts", "src/moved.ts");
  const mv = gitAs(repo, "bob", "commit", "-qm", "move out");
  assert.is.not(mv.code, 0, "the old side of a rename is checked");
  assert.match(mv.stderr, /src\/api\/old\.ts is inside an exclusive lease/);
  gitOut(repo, "reset", "-q", "--hard");

  write(repo, "src/api/old.ts", "changed\n");
  const all = gitAs(repo, "bob", "commit", "-qam", "commit -a uses a temporary index");
  assert.is.not(all.code, 0);
  gitOut(repo, "checkout", "-q", "--", ".");

  write(repo, "src/shared.ts", "mine\n");
  const ok = gitAs(repo, "bob", "commit", "-qam", "shared");
  assert.is(ok.code, 0, ok.stderr);
  assert.match(ok.stderr, /warn: src\/shared\.ts is leased by alice/);
  write(repo, "src/api/old.ts", "alice's own change\n");
  assert.is(gitAs(repo, "alice", "commit", "-qam", "alice may").code, 0);
});

test("pre-commit runs in a linked worktree too (git exports GIT_DIR and GIT_INDEX_FILE there)", () => {
  const repo = initRepo();
  const wt = join(tempDir(), "wt");
  gitOut(repo, "worktree", "add", "-q", "-b", "side", wt);
  write(wt, "src/api/side.ts");
  gitOut(wt, "add", "-A");
  const r = gitAs(wt, "bob", "commit", "-qm", "side");
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /src\/api\/side\.ts is inside an exclusive lease/);
});

test("pre-push refuses commits touching another agent's exclusive lease; advisory mode lets them through", () => {
  const repo = initRepo();
  const origin = tempDir();
  gitOut(origin, "init", "-q", "--bare");
  gitOut(repo, "remote", "add", "origin", origin);
  const first = gitAs(repo, "bob", "push", "origin", "main");
  assert.is.not(first.code, 0, "the first push carries the commit that added src/api/old.ts");
  assert.match(first.stderr, /src\/api\/old\.ts is inside an exclusive lease/);
  assert.is(cli(["unlease", "src/api/**"], { cwd: repo, agent: "alice" }).code, 0);
  assert.is(gitAs(repo, "bob", "push", "-q", "origin", "main").code, 0, "nothing under a lease now");
  write(repo, "src/api/pushed.ts");
  gitOut(repo, "add", "-A");
  assert.is(gitAs(repo, "bob", "commit", "-qm", "before the lease").code, 0);
  assert.is(cli(["lease", "src/api/**", "--exclusive"], { cwd: repo, agent: "alice" }).code, 0);
  const r = gitAs(repo, "bob", "push", "origin", "main");
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /src\/api\/pushed\.ts is inside an exclusive lease on src\/api\/\*\* held by alice/);
  assert.match(r.stderr, /push refused/);
  const newBranch = gitAs(repo, "bob", "push", "origin", "main:refs/heads/other");
  assert.is.not(newBranch.code, 0, "a new branch is checked against what the remote already has");
  writeFileSync(join(repo, ".handoff.yaml"), "mode: advisory\n");
  assert.is(gitAs(repo, "bob", "push", "-q", "origin", "main").code, 0);
});

test("pre-push fencing: work for a task whose lease expired and was taken over is refused, naming the holder", async () => {
  const repo = tempRepo();
  assert.is(cli(["init"], { cwd: repo, agent: "lead" }).code, 0);
  const origin = tempDir();
  gitOut(origin, "init", "-q", "--bare");
  gitOut(repo, "remote", "add", "origin", origin); // the sync remote too (default: origin)
  // A takeover through the remote waits max_clock_skew past the expiry (60 s by default).
  appendFileSync(join(repo, ".handoff.yaml"), "max_clock_skew: 100ms\n");
  assert.is(gitAs(repo, "alice", "push", "-q", "origin", "main").code, 0);
  for (const id of ["fenced", "mine"]) assert.is(cli(["task", "add", "work", "--id", id], { cwd: repo, agent: "lead" }).code, 0);
  assert.is(cli(["claim", "fenced", "--ttl", "1s"], { cwd: repo, agent: "alice" }).code, 0);
  assert.is(cli(["claim", "mine", "--over-capacity"], { cwd: repo, agent: "alice" }).code, 0);

  write(repo, "work.txt", "alice's work\n");
  gitOut(repo, "add", "work.txt");
  assert.is(gitAs(repo, "alice", "commit", "-qm", "work for fenced\n\nHandoff-Task: fenced\nHandoff-Fence: 1").code, 0);
  await new Promise((r) => setTimeout(r, 1500));
  const taken = cli(["claim", "fenced"], { cwd: repo, agent: "bob" });
  assert.is(taken.code, 0, taken.stderr);

  const refused = gitAs(repo, "alice", "push", "origin", "main");
  assert.is.not(refused.code, 0, "alice's lease on fenced ran out and bob holds it now");
  assert.match(refused.stderr, /push refused: task fenced is now held by bob \(fence 2/);
  assert.is(gitOut(origin, "rev-parse", "main"), gitOut(repo, "rev-parse", "main~1"), "nothing was pushed");

  gitOut(repo, "reset", "-q", "--soft", "HEAD~1");
  assert.is(gitAs(repo, "alice", "commit", "-qm", "work for mine\n\nHandoff-Task: mine").code, 0);
  const ok = gitAs(repo, "alice", "push", "-q", "origin", "main");
  assert.is(ok.code, 0, ok.stderr);
  assert.is(gitOut(origin, "rev-parse", "main"), gitOut(repo, "rev-parse", "main"));
});

test("init is idempotent, --dry-run changes nothing, uninstall restores what was there", () => {
  const repo = tempRepo();
  mkdirSync(join(repo, ".claude"));
  const settings = { permissions: { allow: ["Bash(ls)"] }, hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "echo hi" }] }] } };
  writeFileSync(join(repo, ".claude/settings.json"), JSON.stringify(settings));
  writeFileSync(join(repo, ".git/hooks/pre-commit"), "#!/bin/sh\necho earlier hook ran >&2\n");
  chmodSync(join(repo, ".git/hooks/pre-commit"), 0o755);
  mkdirSync(join(repo, ".cursor"));
  writeFileSync(join(repo, ".cursor/hooks.json"), "{ not json");

  const dry = cli(["init", "--dry-run", "--json"], { cwd: repo });
  assert.is(dry.code, 0, dry.stderr);
  assert.ok(dry.json.actions.length > 5);
  assert.not.ok(existsSync(join(repo, ".codex/hooks.json")), "dry run writes nothing");
  assert.not.ok(existsSync(join(repo, ".git/hooks/pre-push")));

  assert.is(cli(["init"], { cwd: repo }).code, 0);
  const merged = JSON.parse(readFileSync(join(repo, ".claude/settings.json"), "utf8"));
  assert.equal(merged.permissions, { allow: ["Bash(ls)", "mcp__git-handoff"] }, "headless Claude may call the MCP tools");
  assert.is(merged.hooks.PreToolUse.length, 2);
  assert.is(merged.hooks.PreToolUse[1].hooks[0].command, "git-handoff-hook claude-pre-tool-use", "the pre-edit hook runs the sh fast path");
  assert.is(merged.hooks.SessionStart[0].hooks[0].command, "git-handoff hook claude-session-start");
  assert.equal(JSON.parse(readFileSync(join(repo, ".claude/settings.json.handoff-backup"), "utf8")), settings);
  assert.is(JSON.parse(readFileSync(join(repo, ".codex/hooks.json"), "utf8")).hooks.PreToolUse[0].matcher, "apply_patch|Bash");
  assert.is(JSON.parse(readFileSync(join(repo, ".gemini/settings.json"), "utf8")).hooks.BeforeTool[0].hooks[0].timeout, 10000);
  assert.is(readFileSync(join(repo, ".cursor/hooks.json"), "utf8"), "{ not json", "a broken config is never clobbered");
  assert.ok(existsSync(join(repo, ".git/hooks/pre-commit.pre-handoff")));

  const snapshot = () => ["/.claude/settings.json", "/.codex/hooks.json", "/.gemini/settings.json", "/.git/hooks/pre-commit"].map((f) => readFileSync(repo + f, "utf8")).join("\0");
  const once = snapshot();
  const again = cli(["init", "--json"], { cwd: repo });
  assert.equal(again.json.actions.filter((a: { op: string }) => a.op !== "note"), []);
  assert.is(snapshot(), once, "a second init changes nothing");

  gitOut(repo, "commit", "-q", "--allow-empty", "-m", "x");
  const commit = gitAs(repo, "bob", "commit", "-q", "--allow-empty", "-m", "y");
  assert.is(commit.code, 0, commit.stderr);
  assert.match(commit.stderr, /earlier hook ran/, "the hook that was there keeps running");

  assert.is(cli(["uninstall"], { cwd: repo }).code, 0);
  assert.equal(JSON.parse(readFileSync(join(repo, ".claude/settings.json"), "utf8")), settings);
  assert.not.ok(existsSync(join(repo, ".codex/hooks.json")));
  assert.not.ok(existsSync(join(repo, ".git/hooks/pre-push")));
  assert.is(readFileSync(join(repo, ".git/hooks/pre-commit"), "utf8"), "#!/bin/sh\necho earlier hook ran >&2\n");
});

test("core.hooksPath is honoured; husky and lefthook get the exact lines to add", () => {
  const repo = tempRepo();
  gitOut(repo, "config", "core.hooksPath", "tools/hooks");
  assert.is(cli(["init"], { cwd: repo }).code, 0);
  assert.match(readFileSync(join(repo, "tools/hooks/pre-commit"), "utf8"), /git-handoff hook pre-commit/);

  const husky = tempRepo();
  mkdirSync(join(husky, ".husky/_"), { recursive: true });
  gitOut(husky, "config", "core.hooksPath", ".husky/_");
  const h = cli(["init"], { cwd: husky });
  assert.match(h.stdout, /add this line to \.husky\/pre-commit:\ngit-handoff hook pre-commit/);
  assert.not.ok(existsSync(join(husky, ".husky/_/pre-commit")));

  const lh = tempRepo();
  writeFileSync(join(lh, "lefthook.yml"), "pre-commit:\n  commands: {}\n");
  const l = cli(["init"], { cwd: lh });
  assert.match(l.stdout, /add to lefthook\.yml:\npre-commit:\n  commands:\n    git-handoff:\n      run: git-handoff hook pre-commit/);
  assert.not.ok(existsSync(join(lh, ".git/hooks/pre-commit")));
});

test("a core.hooksPath from the global git config runs in every repository: init leaves it alone and says how to use this repository's own", () => {
  const repo = tempRepo();
  const shared = tempDir();
  writeFileSync(join(shared, "pre-commit"), "#!/bin/sh\necho the user's global hook >&2\n", { mode: 0o755 });
  const globalConfig = join(tempDir(), "gitconfig");
  writeFileSync(globalConfig, `[core]\n\thooksPath = ${shared}\n`);
  const env = { GIT_CONFIG_GLOBAL: globalConfig };
  const r = cli(["init"], { cwd: repo, env });
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`needs you: +core\\.hooksPath ${shared} comes from your global git config, so its hooks run in every repository: not changed\\. For this repository only: git config core\\.hooksPath \\.git/hooks, then git handoff init again`));
  assert.is(readFileSync(join(shared, "pre-commit"), "utf8"), "#!/bin/sh\necho the user's global hook >&2\n");
  assert.not.ok(existsSync(join(shared, "pre-commit.pre-handoff")) || existsSync(join(shared, "pre-push")));
  const doctor = cli(["doctor", "--json"], { cwd: repo, env });
  const check = doctor.json.checks.find((c: { name: string }) => c.name === "git-hooks");
  assert.is(check.status, "warn");
  assert.match(check.fix, /git config core\.hooksPath \.git\/hooks/);
  // The repository's own setting wins: init installs there.
  gitOut(repo, "config", "core.hooksPath", ".git/hooks");
  assert.is(cli(["init"], { cwd: repo, env }).code, 0);
  assert.match(readFileSync(join(repo, ".git/hooks/pre-commit"), "utf8"), /git-handoff hook pre-commit/);
});

test.run();
