// Input at the edges of what the sh fast path (git-hooks/fast-hook.sh) reads, each found answered
// otherwise than by the full hook: input the full hook refuses (a "no objection" where the full hook
// fails open saying why, or a warning where it says nothing; the full hook handed it must still see
// it refused), a command the fast path cannot tell a patch run from, lease patterns that match
// more than their literal prefix and tail show, and a `..` after a symlink.
import { spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Lease } from "../src/core/lease.ts";
import { refreshFastCache } from "../src/hooks/fast-cache.ts";
import { mutateLeases } from "../src/store/lease-store.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { CLI, cleanEnv, cleanupTemp, cli, tempRepo } from "./support/repo.ts";
import { FAST_HOOK } from "./support/hook-runner.ts";

test.after(cleanupTemp);

const NOW = "2026-12-01T10:00:00.000Z";

function hook(repo: string, fast: boolean, input: string, name = "claude-pre-tool-use") {
  const env = cleanEnv({ HANDOFF_AGENT: "bob", HANDOFF_NOW: NOW, HANDOFF_FAST_HOOK_CLOCK: "1", HANDOFF_HOOK_CATCH_WAIT: "1", ...(fast ? { HANDOFF_FAST_HOOK_WHY: "1" } : { HANDOFF_FAST_HOOK: "0" }) });
  const [file, args] = fast ? [FAST_HOOK, [name]] : [process.execPath, [CLI, "hook", name]];
  return spawnSync(file, args, { cwd: repo, env, input, encoding: "utf8" });
}

/** alice holds src/api/** alone; bob's first edit has compiled the fast path's cache. */
function setup(): { repo: string; edit: (file: string) => string; bash: (command: string) => string } {
  const repo = tempRepo();
  writeFileSync(join(repo, ".handoff.yaml"), "auto_lease: false\n");
  assert.is(cli(["lease", "src/api/**", "--exclusive", "--ttl", "2h"], { cwd: repo, agent: "alice", env: { HANDOFF_NOW: NOW } }).code, 0);
  const edit = (file: string) => JSON.stringify({ session_id: "s", tool_name: "Edit", tool_input: { file_path: file }, cwd: repo });
  const bash = (command: string) => JSON.stringify({ session_id: "s", tool_name: "Bash", tool_input: { command }, cwd: repo });
  assert.is(hook(repo, true, edit("free.ts")).status, 0);
  // The cache holds: the fast path answers a free file and a leased one itself.
  assert.is(hook(repo, true, edit("free.ts")).stderr, "");
  assert.is(hook(repo, true, edit("src/api/users.ts")).stderr, "");
  return { repo, edit, bash };
}

const long = "x".repeat(256);

test("a name longer than any file's (256 characters): an edit is the full hook's to refuse, a command naming it is not warned about", () => {
  const { repo, edit, bash } = setup();
  for (const file of [`free/${long}.ts`, `src/api/${long}`, `${repo}/src/${long}/a.ts`]) {
    const full = hook(repo, false, edit(file));
    assert.match(full.stdout, /could not check this \(pattern \\".*\\" has a path segment of 2\d\d characters; at most 255 .*proceeding \(fail-open\)/, file);
    const fast = hook(repo, true, edit(file));
    assert.is(fast.stdout, full.stdout, file);
    assert.match(fast.stderr, /full hook: a path segment longer than a file name/, file);
  }
  // A word of a command is only a path when it could name a file: the full hook reads this one as none.
  for (const command of [`cat src/api/${long}`, `cat src/api/${long}/`, `cat ${repo}/src/api/${long}/x`]) {
    assert.is(hook(repo, false, bash(command)).stdout, "", command);
    const fast = hook(repo, true, bash(command));
    assert.is(fast.stderr, "", command);
    assert.is(fast.stdout, "", command);
  }
  // 255 is a name like any other.
  const deny = hook(repo, true, edit(`src/api/${"x".repeat(255)}`));
  assert.is(deny.stderr, "");
  assert.match(deny.stdout, /"permissionDecision":"deny"/);
});

test("a NUL byte in the payload: not JSON to the full hook, so not to the fast path or the full hook it hands over to", () => {
  const { repo, edit } = setup();
  for (const input of [edit("free.ts").replace('"session_id":"s"', '"session_id":"a\0b"'), edit("free.ts").replace("{", "{\0"), `${edit("free.ts")}\0`]) {
    const full = hook(repo, false, input);
    assert.match(full.stdout, /could not check this \(claude-pre-tool-use: payload is not valid JSON .*proceeding \(fail-open\)/, JSON.stringify(input));
    const fast = hook(repo, true, input);
    assert.is(fast.stdout, full.stdout, JSON.stringify(input));
    assert.match(fast.stderr, /full hook: not a JSON object|full hook: not JSON/, JSON.stringify(input));
  }
});

test("Gemini runs a command that may be a patch run and names no file otherwise: no answer, as the full hook gives", () => {
  const { repo } = setup();
  const gemini = (command: string) => JSON.stringify({ session_id: "s", tool_name: "run_shell_command", tool_input: { command }, cwd: repo });
  const patch = "<<'EOF'\n*** Begin Patch\n*** Add File: notes\n+a\n*** End Patch\nEOF";
  // apply_patchy is another program: to the full hook a command naming no file (no answer at all), not an edit ({}).
  for (const [command, answer] of [[`apply_patchy ${patch}`, ""], [`echo apply_patch ${patch}`, ""], [`apply_patch ${patch}`, "{}\n"], [`apply_patchy ${patch} docs/x.md`, "{}\n"]]) {
    assert.is(hook(repo, false, gemini(command!), "gemini-before-tool").stdout, answer, command);
    const fast = hook(repo, true, gemini(command!), "gemini-before-tool");
    assert.is(fast.stdout, answer, command);
    // A patch run for sure, or a word to scan: the fast path answers those itself.
    if (answer) assert.is(fast.stderr, "", command);
  }
});

test("an absolute path going up (`..`) after a symlink goes up from where the link leads, for the full hook and the fast path alike", () => {
  const { repo, edit, bash } = setup();
  mkdirSync(join(repo, "src/api/deep"), { recursive: true });
  symlinkSync("src/api/deep", join(repo, "hop"));
  // hop/../x.ts is src/api/x.ts, inside alice's lease, not x.ts as it reads.
  const full = hook(repo, false, edit(`${repo}/hop/../x.ts`));
  assert.match(full.stdout, /"permissionDecision":"deny","permissionDecisionReason":"git-handoff deny: src\/api\/x\.ts is inside an exclusive lease on src\/api\/\*\* held by alice/);
  assert.is(hook(repo, true, edit(`${repo}/hop/../x.ts`)).stdout, full.stdout);
  const word = hook(repo, false, bash(`cat ${repo}/hop/../x.ts`));
  assert.match(word.stdout, /git-handoff warn: this command names src\/api\/x\.ts, inside an exclusive lease on src\/api\/\*\*/);
  assert.is(hook(repo, true, bash(`cat ${repo}/hop/../x.ts`)).stdout, word.stdout);
  // Without a symlink on the way, `..` is read as it reads: the fast path answers that itself.
  const plain = hook(repo, true, edit(`${repo}/src/api/deep/../../x.ts`));
  assert.is(plain.stderr, "");
  assert.is(plain.stdout, hook(repo, false, edit(`${repo}/src/api/deep/../../x.ts`)).stdout);
});

test("a `..` after a symlink is judged where the kernel takes it and where a tool that tidies the path writes, relative or absolute, by the full hook and the fast path alike", () => {
  const { repo, edit } = setup();
  mkdirSync(join(repo, "src/api/deep"), { recursive: true });
  mkdirSync(join(repo, "other"), { recursive: true });
  symlinkSync("src/api/deep", join(repo, "hop"));
  symlinkSync("../../other", join(repo, "src/api/out"));
  const denied = /"permissionDecision":"deny","permissionDecisionReason":"git-handoff deny: src\/api\/(x|users)\.ts is inside an exclusive lease on src\/api\/\*\* held by alice/;
  for (const file of [
    // The kernel's place is leased (hop/../x.ts is src/api/x.ts), the tidied one (x.ts) is free:
    // relative, this was judged as the free x.ts.
    "hop/../x.ts",
    `${repo}/hop/../x.ts`,
    // The tidied place is leased (src/api/users.ts), the kernel's (users.ts, up from other/) is free:
    // absolute, this was judged as the free users.ts.
    "src/api/out/../users.ts",
    `${repo}/src/api/out/../users.ts`,
  ]) {
    const full = hook(repo, false, edit(file));
    assert.match(full.stdout, denied, file);
    assert.is(hook(repo, true, edit(file)).stdout, full.stdout, file);
  }
  // Without a symlink on the way the two places are one: nothing more is judged.
  assert.is(hook(repo, false, edit("src/api/deep/../../../x.ts")).stdout, "");
});

test("a lease glob with a `..`, `.` or empty segment (another clone may push one): the fast path leaves every edit it may cover to the full hook", async () => {
  const { repo, edit } = setup();
  // A local lease is normalised (`src/?/../b.ts` is src/b.ts); one received from another clone is
  // only bounded in size. minimatch reads `x/..` as nothing and `//` as `/`.
  process.env.HANDOFF_NOW = NOW;
  const store = await openSyncedStore({ cwd: repo, agent: "bob" });
  const at = (min: number) => new Date(Date.parse(NOW) + min * 60_000).toISOString();
  const lease = (pattern: string): Lease => ({ pattern, agent: "alice", task: null, exclusive: true, acquired_at: at(-1), expires_at: at(60), ttl_ms: 7_200_000, reason: null, worktree: null, branch: null, scope: "worktree" });
  // Each alone: one such lease makes the fast path hand over whatever it may cover.
  for (const [pattern, file] of [["lib/?/../b.ts", "lib/b.ts"], ["docs/*/{.,x}./guide.md", "docs/guide.md"], ["pkg/*/a//x.ts", "pkg/x/a/x.ts"]]) {
    await mutateLeases(store, (_s, ctx) => {
      const record = { leases: [lease("src/api/**"), lease(pattern!)] };
      return { ok: true, record, steps: [{ event: { type: "leased", task: "", agent: "alice", at: ctx.now.toISOString(), scope: "primary", worktree: null, branch: null, paths: [pattern!] }, record }] };
    });
    await refreshFastCache(store, { HANDOFF_AGENT: "bob" });
    const full = hook(repo, false, edit(file!));
    assert.match(full.stdout, /"permissionDecision":"deny"/, file);
    assert.is(hook(repo, true, edit(file!)).stdout, full.stdout, `${pattern} on ${file}`);
  }
  store.close();
  delete process.env.HANDOFF_NOW;
});

test.run();
