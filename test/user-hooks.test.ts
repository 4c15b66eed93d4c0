// `git handoff init --user` / `uninstall --user`: user-scope agent hooks for agents started in a
// subfolder, and the sh script they run, which must stay out of the way everywhere else.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanEnv, cleanupTemp, cli, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

function userEnv() {
  const home = tempDir("handoff-home-");
  return { home, env: { HOME: home, XDG_CONFIG_HOME: join(home, ".config") } };
}

test("init --user merges into the user's settings, is idempotent, and uninstall --user restores them", () => {
  const { home, env } = userEnv();
  mkdirSync(join(home, ".claude"));
  const mine = { model: "opus", hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "echo mine" }] }] } };
  writeFileSync(join(home, ".claude/settings.json"), JSON.stringify(mine));
  const outside = tempDir();
  const r = cli(["init", "--user", "--json"], { cwd: outside, env });
  assert.is(r.code, 0, r.stderr);
  assert.is(r.json.scope, "user");
  const claude = JSON.parse(readFileSync(join(home, ".claude/settings.json"), "utf8"));
  assert.is(claude.model, "opus");
  assert.is(claude.hooks.PreToolUse.length, 2);
  assert.match(claude.hooks.PreToolUse[1].hooks[0].command, /^'.*\/\.config\/git-handoff\/agent-hook' claude-pre-tool-use$/);
  const gemini = JSON.parse(readFileSync(join(home, ".gemini/settings.json"), "utf8"));
  assert.equal(Object.keys(gemini.hooks).sort(), ["AfterTool", "BeforeTool", "SessionStart"]);
  const again = cli(["init", "--user", "--json"], { cwd: outside, env });
  assert.equal(again.json.actions, [], "a second init --user changes nothing");
  const dry = cli(["uninstall", "--user", "--dry-run"], { cwd: outside, env });
  assert.match(dry.stdout, /^would do: +remove user-scope git-handoff hooks/m);
  assert.ok(existsSync(join(home, ".config/git-handoff/agent-hook")));
  assert.is(cli(["uninstall", "--user"], { cwd: outside, env }).code, 0);
  assert.equal(JSON.parse(readFileSync(join(home, ".claude/settings.json"), "utf8")), mine);
  assert.not.ok(existsSync(join(home, ".gemini/settings.json")));
  assert.not.ok(existsSync(join(home, ".config/git-handoff/agent-hook")));
});

test("the user hook script: exits at once (no Node) outside repositories using git-handoff; defers to the project's hook", () => {
  const { home, env } = userEnv();
  assert.is(cli(["init", "--user"], { cwd: home, env }).code, 0);
  const script = join(home, ".config/git-handoff/agent-hook");
  // A stand-in git-handoff that only records that it was started, and how.
  const bin = tempDir("handoff-bin-");
  const marker = join(bin, "started");
  writeFileSync(join(bin, "git-handoff"), `#!/bin/sh\necho "$@" >> '${marker}'\n`);
  chmodSync(join(bin, "git-handoff"), 0o755);
  const run = (dir: string, extra: NodeJS.ProcessEnv = {}) => {
    const t = process.hrtime.bigint();
    const r = spawnSync(script, ["claude-pre-tool-use"], { cwd: dir, input: "{}", env: cleanEnv({ PATH: `${bin}:${process.env.PATH}`, ...extra }), encoding: "utf8" });
    assert.is(r.status, 0, r.stderr);
    return Number(process.hrtime.bigint() - t) / 1e6;
  };
  const started = () => (existsSync(marker) ? readFileSync(marker, "utf8") : "");

  const msOutside = run(tempDir());
  const plain = tempRepo();
  const msPlain = run(plain);
  assert.is(started(), "", "outside a repository, and in one without refs/handoff/, nothing is started");
  process.stdout.write(`  user hook outside a repository: ${msOutside.toFixed(1)} ms; in a repository without git-handoff: ${msPlain.toFixed(1)} ms\n`);

  const repo = tempRepo();
  assert.is(cli(["lease", "x.txt"], { cwd: repo, agent: "alice" }).code, 0);
  mkdirSync(join(repo, "sub"));
  run(join(repo, "sub"), { CLAUDE_PROJECT_DIR: join(repo, "sub") });
  assert.is(started(), "hook claude-pre-tool-use\n", "started in a subfolder: the user hook runs the check");
  assert.is(cli(["init"], { cwd: repo }).code, 0);
  run(repo, { CLAUDE_PROJECT_DIR: repo });
  assert.is(started(), "hook claude-pre-tool-use\n", "where the project's hook runs, the user hook leaves it to that one");
  // Packed refs count as well as loose ones (as in a fresh clone: no refs/handoff/ folder).
  spawnSync("git", ["pack-refs", "--all"], { cwd: repo });
  rmSync(join(repo, ".git/refs/handoff"), { recursive: true });
  run(join(repo, "sub"), { CLAUDE_PROJECT_DIR: join(repo, "sub") });
  assert.is(started().split("\n").length, 3);
});

test.run();
