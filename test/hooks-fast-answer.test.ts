// The fast path's own deny and warn answers, end to end with the real full hook next to it: the
// same bytes as the full hook at the same (scripted) clock, given without starting Node, and the
// catch logged afterwards by the full hook it runs in the background (waited for or not).
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, cleanEnv, cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { FAST_HOOK } from "./support/hook-runner.ts";
import { storeLease } from "./support/seed.ts";

test.after(cleanupTemp);

const NOW = "2026-12-01T10:00:00.000Z";

function hook(repo: string, file: string, input: string, extra: NodeJS.ProcessEnv = {}) {
  const env = cleanEnv({ HANDOFF_AGENT: "bob", HANDOFF_NOW: NOW, HANDOFF_FAST_HOOK_CLOCK: "1", HANDOFF_FAST_HOOK_WHY: "1", ...extra });
  const args = file === FAST_HOOK ? ["claude-pre-tool-use"] : [CLI, "hook", "claude-pre-tool-use"];
  return spawnSync(file, args, { cwd: repo, env, input, encoding: "utf8" });
}

const caught = (repo: string) => {
  const tip = gitOut(repo, "for-each-ref", "--format=%(objectname)", "refs/handoff/log/bob");
  return tip ? gitOut(repo, "log", "--format=%B", tip).split("\n").filter((l) => l.includes("hook_caught")).length : 0;
};

/** alice's, carol's and bob's leases (written in-process: support/seed.ts), and the cache the first full hook compiles. */
async function setup() {
  const repo = tempRepo();
  const at = { cwd: repo, now: NOW };
  await storeLease({ ...at, agent: "alice" }, ["src/api/**"], { exclusive: true, ttl: "2h", reason: 'a "big" refactor' });
  await storeLease({ ...at, agent: "carol" }, ["docs/guide.md"], { ttl: "45m" });
  await storeLease({ ...at, agent: "bob" }, ["docs/guide.md"], { ttl: "45m" });
  const payload = (file: string) => JSON.stringify({ session_id: "s", tool_name: "Edit", tool_input: { file_path: `${repo}/${file}` }, cwd: repo });
  // The first run has no cache: the full hook answers and compiles it.
  assert.is(hook(repo, FAST_HOOK, payload("free.ts"), { HANDOFF_HOOK_CATCH_WAIT: "1" }).status, 0);
  return { repo, payload };
}

test("a denied and a warned edit: the fast path answers with the full hook's bytes, and the catch is logged after", async () => {
  const { repo, payload } = await setup();
  for (const [file, kind] of [["src/api/users.ts", "deny"], ["docs/guide.md", "warn"]] as const) {
    const before = caught(repo);
    const fast = hook(repo, FAST_HOOK, payload(file), { HANDOFF_HOOK_CATCH_WAIT: "1" });
    assert.is(fast.stderr, "", `the fast path answered itself (${kind})`);
    assert.is(fast.status, 0);
    const full = hook(repo, process.execPath, payload(file), { HANDOFF_FAST_HOOK: "0", HANDOFF_HOOK_CATCH_WAIT: "1" });
    assert.is(fast.stdout, full.stdout, kind);
    assert.match(fast.stdout, kind === "deny" ? /"permissionDecision":"deny".*inside an exclusive lease on src\/api\/\*\* held by alice until 2026-12-01T12:00:00\.000Z \(in 2h\); reason: a \\"big\\" refactor/ : /"additionalContext":"git-handoff warn: docs\/guide\.md is leased by carol until 2026-12-01T10:45:00\.000Z \(in 45m\)/);
    assert.is(caught(repo), before + 2, "one catch from the fast path's background run, one from the full hook");
  }
});

test("an agent named by default (user and host, no HANDOFF_AGENT): the cache names the host as the fast path reads it, and the fast path answers", async () => {
  const repo = tempRepo();
  const at = { cwd: repo, env: { HANDOFF_NOW: NOW } };
  assert.is(cli(["lease", "docs/guide.md", "--ttl", "45m"], { ...at, agent: "carol" }).code, 0);
  const payload = (file: string) => JSON.stringify({ session_id: "s", tool_name: "Edit", tool_input: { file_path: `${repo}/${file}` }, cwd: repo });
  const run = (file: string) =>
    spawnSync(FAST_HOOK, ["claude-pre-tool-use"], { cwd: repo, env: cleanEnv({ USER: "dora", HANDOFF_NOW: NOW, HANDOFF_FAST_HOOK_CLOCK: "1", HANDOFF_FAST_HOOK_WHY: "1", HANDOFF_HOOK_CATCH_WAIT: "1" }), input: payload(file), encoding: "utf8" });
  assert.is(run("free.ts").status, 0, "the first run: the full hook answers and compiles the cache");
  const cache = readFileSync(join(repo, ".git/handoff/fast-hook/u.dora"), "utf8");
  assert.match(cache, new RegExp(`\nhost\t${readFileSync("/proc/sys/kernel/hostname", "utf8").trim().replace(/[.]/g, "\\.")}\n`));
  const warned = run("docs/guide.md");
  assert.is(warned.stderr, "", "the fast path answered itself");
  assert.match(warned.stdout, /git-handoff warn: docs\/guide\.md is leased by carol/);
});

test("not waited for: the answer comes first, the background full hook logs the catch soon after", async () => {
  const { repo, payload } = await setup();
  const before = caught(repo);
  const fast = hook(repo, FAST_HOOK, payload("src/api/x.ts"));
  assert.is(fast.stderr, "");
  assert.match(fast.stdout, /"permissionDecision":"deny"/);
  const deadline = Date.now() + 30_000;
  while (caught(repo) === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.is(caught(repo), before + 1);
});

test("git commit: refused by the fast path with the full hook's words, for the index, commit -a and a partial commit, the catch logged each time", () => {
  const repo = tempRepo();
  const at = { cwd: repo, env: { HANDOFF_NOW: NOW } };
  assert.is(cli(["lease", "src/**", "--exclusive", "--ttl", "2h"], { ...at, agent: "alice" }).code, 0);
  writeFileSync(join(repo, ".git/hooks/pre-commit"), `#!/bin/sh\nexec '${FAST_HOOK}' pre-commit\n`);
  chmodSync(join(repo, ".git/hooks/pre-commit"), 0o755);
  mkdirSync(join(repo, "src"));
  writeFileSync(join(repo, "src/a.ts"), "a\n");
  writeFileSync(join(repo, "free.ts"), "a\n");
  gitOut(repo, "add", "free.ts");
  gitOut(repo, "commit", "-qm", "free");
  const env = cleanEnv({ HANDOFF_AGENT: "bob", HANDOFF_NOW: NOW, HANDOFF_FAST_HOOK_CLOCK: "1", HANDOFF_HOOK_CATCH_WAIT: "1", GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" });
  const commit = (...args: string[]) => spawnSync("git", ["commit", "-qm", "x", ...args], { cwd: repo, env: { ...env, HANDOFF_FAST_HOOK_WHY: "1" }, encoding: "utf8" });
  gitOut(repo, "add", "src/a.ts");
  const first = commit();
  assert.is(first.status, 1);
  const want = first.stderr.replace(/^git-handoff-hook: full hook: .*\n/, "");
  assert.match(want, /^git-handoff deny: src\/a\.ts is inside an exclusive lease on src\/\*\* held by alice until 2026-12-01T12:00:00\.000Z \(in 2h\)\n[^]*git-handoff: commit refused: /);
  const before = caught(repo);
  const again = commit();
  assert.is(again.status, 1);
  assert.is(again.stderr, want, "the fast path refused it with the same words");
  assert.is(caught(repo), before + 1);
  gitOut(repo, "reset", "-q");
  writeFileSync(join(repo, "free.ts"), "b\n");
  gitOut(repo, "add", "src/a.ts");
  gitOut(repo, "commit", "-q", "--no-verify", "-m", "a.ts");
  writeFileSync(join(repo, "src/a.ts"), "b\n");
  // The branch moved (no policy committed on it): the full hook answers once and compiles the cache again.
  assert.match(commit("-a").stderr, /full hook: refs moved/);
  for (const args of [["-a"], ["--", "src/a.ts"]]) {
    const n = caught(repo);
    const r = commit(...args);
    assert.is(r.status, 1, args.join(" "));
    assert.match(r.stderr, /^git-handoff deny: src\/a\.ts is inside/, `answered by the fast path: ${r.stderr.split("\n")[0]}`);
    assert.is(caught(repo), n + 1, `the catch of commit ${args.join(" ")}`);
  }
  assert.equal(readdirSync(join(repo, ".git")).filter((f) => f.includes(".handoff-")), [], "no copy of an index left behind");
});

test("a cache an older version wrote is compiled again by the next full hook, though nothing it is keyed by moved", async () => {
  const { repo, payload } = await setup();
  const file = join(repo, ".git/handoff/fast-hook/a.bob");
  const text = readFileSync(file, "utf8");
  assert.match(text, /^git-handoff fast-hook 4\n/);
  writeFileSync(file, text.replace(/^git-handoff fast-hook 4\n/, "git-handoff fast-hook 2\n"));
  assert.match(hook(repo, FAST_HOOK, payload("free.ts")).stderr, /full hook: no cache/);
  assert.is(readFileSync(file, "utf8"), text);
  assert.match(hook(repo, FAST_HOOK, payload("free.ts")).stderr, /full hook: outside the declaration/, "the cache is read again");
});

test.run();
