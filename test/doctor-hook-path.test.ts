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
  assert.match(missing.fix!, /npm link in the git-handoff checkout/, "the package is not on the registry: no npm install -g");

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

test("init says when the commands its hooks run are not on the PATH, and not when they are", () => {
  const bare = "/usr/local/bin:/usr/bin:/bin";
  const repo = tempRepo();
  const init = (PATH: string) => cli(["init", "--json"], { cwd: repo, agent: "lead", env: { PATH } });
  const notes = (PATH: string) => (init(PATH).json.actions as { op: string; detail: string; needs_you?: boolean }[]).filter((a) => /not on the PATH/.test(a.detail));
  const text = cli(["init"], { cwd: repo, agent: "lead", env: { PATH: bare } }).stdout;
  assert.match(text, /needs you: +git-handoff and git-handoff-hook are not on the PATH: the hooks let every edit, commit and push through until they are\. To fix: run npm link/);
  const bin = tempDir("handoff-bin-");
  for (const name of ["git-handoff", "git-handoff-hook"]) {
    writeFileSync(join(bin, name), "#!/bin/sh\nexit 0\n");
    chmodSync(join(bin, name), 0o755);
  }
  assert.equal(notes(`${bin}:${bare}`), [], "both found: nothing to say");
  rmSync(join(bin, "git-handoff-hook"));
  const left = notes(`${bin}:${bare}`);
  assert.is(left.length, 1);
  assert.ok(left[0]!.needs_you);
  assert.match(left[0]!.detail, /^git-handoff-hook is not on the PATH: the agents' pre-edit hook commands fail and their edits go unchecked until it is \(git's pre-commit hook falls back to git-handoff, slower\)\. To fix: /, "only what goes unchecked without it");
  writeFileSync(join(bin, "git-handoff-hook"), "#!/bin/sh\nexit 0\n");
  chmodSync(join(bin, "git-handoff-hook"), 0o755);
  rmSync(join(bin, "git-handoff"));
  assert.match(notes(`${bin}:${bare}`)[0]!.detail, /^git-handoff is not on the PATH: the pre-push hook lets every push through and the agents' session-start hooks fail until it is \(edits and commits are checked through git-handoff-hook\)/);
  assert.match(notes(bare)[0]!.detail, /^git-handoff and git-handoff-hook are not/, "one note for both");
  assert.equal(cli(["init", "--no-hooks", "--json"], { cwd: repo, agent: "lead", env: { PATH: bare } }).json.actions, [], "no hooks installed: nothing to say");
});

test.run();
