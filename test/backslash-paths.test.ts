// On POSIX a backslash is a character of a file name, not a separator: a lease on `back\slash.txt`
// is on that file, and `back/slash.txt` is another one. Leases, checks, the agent hooks and git's
// pre-commit hook (full and fast path alike) all read it so.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { matchesPath, overlapWitness } from "../src/core/glob-overlap.ts";
import { normalizeRepoPath } from "../src/core/paths.ts";
import { CLI, cleanEnv, cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { FAST_HOOK } from "./support/hook-runner.ts";

test.after(cleanupTemp);

const NOW = "2026-12-01T10:00:00.000Z";
const LITERAL = "back\\slash.txt";

test("a typed path keeps its backslash on POSIX; on Windows it is a separator", () => {
  assert.is(normalizeRepoPath(LITERAL, "/r"), LITERAL);
  assert.is(normalizeRepoPath("/r/a\\b/c.ts", "/r", "/r/x"), "a\\b/c.ts");
  assert.is(normalizeRepoPath(LITERAL, "/r", "/r", true), "back/slash.txt");
});

test("a backslash in a lease pattern stands for itself, in matching and in overlap", () => {
  assert.ok(matchesPath(LITERAL, LITERAL));
  assert.not.ok(matchesPath(LITERAL, "back/slash.txt"));
  assert.ok(matchesPath("back\\sl*.txt", LITERAL));
  assert.not.ok(matchesPath("back\\sl*.txt", "backslash.txt"), "not an escape of the s");
  assert.ok(matchesPath("back\\*", LITERAL), "not an escape of the star");
  assert.ok(matchesPath("**/x\\{a,b}", "d/x\\b"));
  assert.is(overlapWitness("back\\*", "*\\slash.txt"), LITERAL);
  assert.is(overlapWitness("back\\s*", "backs*"), null);
  assert.is(overlapWitness("back\\*", "back/*"), null);
});

function commitAs(repo: string, agent: string, fast: boolean, file: string) {
  const env = cleanEnv({
    HANDOFF_AGENT: agent,
    HANDOFF_NOW: NOW,
    HANDOFF_FAST_HOOK_CLOCK: "1",
    HANDOFF_FAST_HOOK_WHY: "1",
    HANDOFF_HOOK_CATCH_WAIT: "1",
    ...(fast ? {} : { HANDOFF_FAST_HOOK: "0" }),
    GIT_AUTHOR_NAME: "t",
    GIT_AUTHOR_EMAIL: "t@t",
    GIT_COMMITTER_NAME: "t",
    GIT_COMMITTER_EMAIL: "t@t",
  });
  mkdirSync(join(repo, file, ".."), { recursive: true });
  writeFileSync(join(repo, file), `${Math.random()}\n`);
  gitOut(repo, "add", "--", file);
  const r = spawnSync("git", ["commit", "-qm", file], { cwd: repo, env, encoding: "utf8" });
  gitOut(repo, "reset", "-q");
  return { code: r.status ?? 1, stderr: r.stderr };
}

test("an exclusive lease on back\\slash.txt: a commit of that file is refused, one of back/slash.txt goes through, check agrees", () => {
  const repo = tempRepo();
  const at = { cwd: repo, env: { HANDOFF_NOW: NOW } };
  const leased = cli(["lease", LITERAL, "--exclusive", "--ttl", "2h", "--json"], { ...at, agent: "alice" });
  assert.is(leased.code, 0, leased.stderr);
  assert.equal(
    (cli(["leases", "--json"], at).json as { pattern: string }[]).map((l) => l.pattern),
    [LITERAL],
  );
  writeFileSync(join(repo, ".git/hooks/pre-commit"), `#!/bin/sh\nexec '${FAST_HOOK}' pre-commit\n`);
  chmodSync(join(repo, ".git/hooks/pre-commit"), 0o755);
  for (const fast of [false, true]) {
    const refused = commitAs(repo, "bob", fast, LITERAL);
    assert.is(refused.code, 1, `${fast ? "fast" : "full"} hook: ${refused.stderr}`);
    assert.match(refused.stderr, /git-handoff deny: back\\slash\.txt is inside an exclusive lease on back\\slash\.txt held by alice/);
    const other = commitAs(repo, "bob", fast, "back/slash.txt");
    assert.is(other.code, 0, `${fast ? "fast" : "full"} hook: ${other.stderr}`);
    assert.not.match(other.stderr, /deny|warn/);
  }
  const denied = cli(["check", LITERAL], { ...at, agent: "bob" });
  assert.is(denied.code, 3, denied.stdout);
  assert.match(denied.stdout, /^deny {2}back\\slash\.txt is inside an exclusive lease on back\\slash\.txt/);
  const free = cli(["check", "back/slash.txt"], { ...at, agent: "bob" });
  assert.is(free.code, 0, free.stdout);
  assert.match(free.stdout, /^ok {4}back\/slash\.txt/);
});

test("an agent's edit of back\\slash.txt: the fast path answers as the full hook does, and back/slash.txt is free", () => {
  const repo = tempRepo();
  assert.is(cli(["lease", LITERAL, "--exclusive", "--ttl", "2h"], { cwd: repo, env: { HANDOFF_NOW: NOW }, agent: "alice" }).code, 0);
  const payload = (file: string) => JSON.stringify({ session_id: "s", tool_name: "Edit", tool_input: { file_path: `${repo}/${file}` }, cwd: repo });
  const hook = (fast: boolean, file: string) => {
    const env = cleanEnv({ HANDOFF_AGENT: "bob", HANDOFF_NOW: NOW, HANDOFF_FAST_HOOK_CLOCK: "1", HANDOFF_HOOK_CATCH_WAIT: "1", ...(fast ? {} : { HANDOFF_FAST_HOOK: "0" }) });
    const [exe, args] = fast ? [FAST_HOOK, ["claude-pre-tool-use"]] : [process.execPath, [CLI, "hook", "claude-pre-tool-use"]];
    return spawnSync(exe, args, { cwd: repo, env, input: payload(file), encoding: "utf8" }).stdout;
  };
  hook(true, "warm.ts"); // compiles the fast path's cache
  for (const file of [LITERAL, "back/slash.txt"]) {
    for (let i = 0; i < 2; i++) {
      const fast = hook(true, file);
      const full = hook(false, file);
      if (file === LITERAL) assert.match(full, /"permissionDecision":"deny".*back\\\\slash\.txt is inside an exclusive lease on back\\\\slash\.txt held by alice/);
      else assert.not.match(full, /deny/);
      assert.is(fast, full, `${file}, run ${i + 1}`);
    }
  }
});

test.run();
