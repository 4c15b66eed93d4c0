// doctor's fast-hook-path check: silent while no hook runs git-handoff-hook; once init installed
// hooks that do, a warning with its fix while git-handoff-hook is not on the PATH, ok once it is.
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

type CheckJson = { name: string; status: string; detail: string; fix?: string };
function check(repo: string, PATH: string): CheckJson | undefined {
  const r = cli(["doctor", "--json"], { cwd: repo, agent: "lead", env: { PATH } });
  return (r.json.checks as CheckJson[]).find((c) => c.name === "fast-hook-path");
}

test("git-handoff-hook on the PATH: checked only where hooks run it, with the fix", () => {
  const repo = tempRepo();
  const bare = "/usr/local/bin:/usr/bin:/bin";
  assert.is(check(repo, bare), undefined, "no hook here runs git-handoff-hook: nothing to say");

  assert.is(cli(["init"], { cwd: repo, agent: "lead" }).code, 0);
  const missing = check(repo, bare)!;
  assert.is(missing.status, "warn");
  assert.match(missing.detail, /\.claude\/settings\.json.* run git-handoff-hook, which is not on the PATH: the agents' pre-edit hook commands fail/);
  assert.match(missing.detail, /the git pre-commit hook/);
  assert.match(missing.fix!, /npm install -g git-handoff/);

  const bin = tempDir("handoff-bin-");
  const hook = join(bin, "git-handoff-hook");
  writeFileSync(hook, "#!/bin/sh\nexit 0\n");
  const PATH = `${bin}:${bare}`;
  assert.is(check(repo, PATH)!.status, "warn", "a git-handoff-hook that is not executable is not found");
  chmodSync(hook, 0o755);
  const found = check(repo, PATH)!;
  assert.is(found.status, "ok");
  assert.match(found.detail, new RegExp(`find git-handoff-hook at ${hook}`));

  // Only the git hook left: commits still get checked, by the full hook.
  for (const f of [".claude/settings.json", ".codex/hooks.json", ".cursor/hooks.json", ".gemini/settings.json"]) rmSync(join(repo, f), { force: true });
  const commitOnly = check(repo, bare)!;
  assert.is(commitOnly.status, "warn");
  assert.match(commitOnly.detail, /^the git pre-commit hook runs git-handoff-hook, which is not on the PATH: commits are checked by the slower full hook$/);
});

test.run();
