// One policy per repository: the .handoff.yaml committed on the integration branch reaches every
// worktree; a branch's weaker or broken file changes nothing (and is reported); a worktree may be
// stricter; a broken commit on the integration branch falls back to the last one that parses.
import { mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openStore } from "../src/store/store.ts";
import { cleanupTemp, cli, gitOut, tempDir } from "./support/repo.ts";
import { commitFile, team } from "./support/team.ts";

test.after(cleanupTemp);

test("strict on main reaches every worktree; a branch's advisory or broken file changes nothing", () => {
  const t = team(["alice", "bob"]);
  assert.is(t.as("alice", ["lease", "src/shared.ts"]).code, 0);
  assert.is(t.as("alice", ["lease", "src/core.ts", "--exclusive"]).code, 0);
  assert.is(t.as("bob", ["check", "src/shared.ts"]).code, 0, "balanced: a shared lease only warns");

  commitFile(t.repo, ".handoff.yaml", "mode: strict\n", "policy: strict");
  const strict = t.as("bob", ["check", "src/shared.ts", "--json"]);
  assert.is(strict.code, 3, "strict committed on main reaches bob's branch, which never merged it");
  assert.is(strict.json.mode, "strict");

  commitFile(t.wt.bob!, ".handoff.yaml", "mode: advisory\n", "bob: advisory");
  const weaker = t.as("bob", ["check", "src/core.ts", "--json"]);
  assert.is(weaker.code, 3, "bob's branch cannot turn alice's exclusive lease into a warning");
  assert.is(weaker.json.mode, "strict");
  assert.match(weaker.stderr, /this worktree's \.handoff\.yaml asks for mode: advisory \(the repository's is strict, at main \([0-9a-f]{12}\); a worktree may only be stricter\): set aside/);

  writeFileSync(join(t.wt.bob!, ".handoff.yaml"), "mode: [\n");
  const broken = t.as("bob", ["check", "src/core.ts", "--json"]);
  assert.is(broken.code, 3, "a typo in a branch's file does not fail open");
  assert.is(broken.json.mode, "strict");
  assert.match(broken.stderr, /this worktree's \.handoff\.yaml is ignored: \.handoff\.yaml line \d/);

  const refs = gitOut(t.repo, "for-each-ref", "refs/handoff/");
  assert.is(t.as("bob", ["lease", "src/core.ts"]).code, 3, "and a lease in the way is still refused");
  assert.is(gitOut(t.repo, "for-each-ref", "refs/handoff/"), refs);
});

test("a worktree may be stricter; ignore only a subset", () => {
  const t = team(["alice", "bob"]);
  commitFile(t.repo, ".handoff.yaml", "ignore:\n  - '*.snap'\n  - 'gen/**'\n", "policy");
  assert.is(t.as("alice", ["lease", "src/shared.ts"]).code, 0);
  writeFileSync(join(t.wt.bob!, ".handoff.yaml"), "mode: strict\nignore:\n  - '*.snap'\n  - 'src/**'\n");
  const r = t.as("bob", ["check", "src/shared.ts", "x.snap", "gen/a.ts", "--json"]);
  assert.is(r.code, 3, "bob's own strict mode applies to bob");
  assert.is(r.json.mode, "strict");
  const ignored = Object.fromEntries(r.json.paths.map((p: { path: string; ignored?: boolean }) => [p.path, !!p.ignored]));
  assert.equal(ignored, { "src/shared.ts": false, "x.snap": true, "gen/a.ts": false }, "src/** is not ignored; gen/** no longer is");
  assert.match(r.stderr, /asks for ignore: src\/\*\* \(not ignored by the repository's policy/);
  assert.is(t.as("alice", ["check", "src/shared.ts", "--json"]).json.mode, "balanced", "alice's worktree keeps the repository's mode");
});

test("a policy commit that does not parse falls back to the last one that does, and says so", () => {
  const t = team(["bob"]);
  assert.is(t.as("lead", ["lease", "src/shared.ts"]).code, 0);
  const good = commitFile(t.repo, ".handoff.yaml", "mode: strict\n", "policy: strict");
  commitFile(t.repo, "README.md", "readme\n");
  commitFile(t.repo, ".handoff.yaml", "mode: [\n", "policy: typo");
  const r = t.as("bob", ["check", "src/shared.ts", "--json"]);
  assert.is(r.code, 3, "strict stays in force: fail closed");
  assert.is(r.json.mode, "strict");
  assert.match(r.stderr, new RegExp(`does not parse .*; using the one at ${good.slice(0, 12)}, the last that does`));
  // A later commit leaves the broken file as it is: still the fallback, and the message names the new tip.
  const tip = commitFile(t.repo, "NOTES.md", "notes\n");
  const again = t.as("bob", ["check", "src/shared.ts", "--json"]);
  assert.is(again.code, 3);
  assert.match(again.stderr, new RegExp(`at main \\(${tip.slice(0, 12)}\\) does not parse .*; using the one at ${good.slice(0, 12)}`));
});

/** A command's JSON answer and the git commands it started (GIT_TRACE). */
function traced(cwd: string, agent: string, args: string[]): { code: number; json: any; git: string[] } {
  const trace = join(tempDir("handoff-trace-"), "trace");
  const r = cli(args, { cwd, agent, env: { GIT_TRACE: trace } });
  let text = "";
  try {
    text = readFileSync(trace, "utf8");
  } catch {
    /* no git process */
  }
  return { code: r.code, json: r.json, git: text.split("\n").filter((l) => l.includes("trace: built-in: git ")).map((l) => l.split("trace: built-in: ")[1]!) };
}

test("a commit on the integration branch: its .handoff.yaml is read in process, kept when unchanged, applied at once when changed, packed or not", () => {
  const t = team(["bob"]);
  assert.is(t.as("lead", ["lease", "src/shared.ts"]).code, 0);
  commitFile(t.repo, ".handoff.yaml", "mode: strict\n", "policy: strict");
  const mode = () => traced(t.wt.bob!, "bob", ["check", "src/shared.ts", "--json"]);
  assert.is(mode().json.mode, "strict");
  // A commit that leaves the file alone: the policy stands, no git process is started.
  commitFile(t.repo, "README.md", "readme\n");
  const kept = mode();
  assert.equal([kept.code, kept.json.mode, kept.git], [3, "strict", []]);
  // A commit that changes it: the new one applies to the next command, still without git.
  commitFile(t.repo, ".handoff.yaml", "mode: balanced\n", "policy: balanced");
  const balanced = mode();
  assert.equal([balanced.code, balanced.json.mode, balanced.git], [0, "balanced", []]);
  // The objects packed (and the file's blobs deltified against each other): read from the pack.
  commitFile(t.repo, ".handoff.yaml", "mode: strict\n# a comment that makes this blob a delta's target\n", "policy: strict again");
  gitOut(t.repo, "gc", "-q", "--aggressive");
  const packed = mode();
  assert.equal([packed.code, packed.json.mode, packed.git], [3, "strict", []]);
  // A folder named .handoff.yaml is no policy file (as `git cat-file blob` finds none): the default mode.
  gitOut(t.repo, "rm", "-q", ".handoff.yaml");
  mkdirSync(join(t.repo, ".handoff.yaml"));
  commitFile(t.repo, ".handoff.yaml/x", "mode: strict\n", "a folder");
  const folder = mode();
  assert.equal([folder.code, folder.json.mode, folder.git], [0, "balanced", []]);
});

test("the integration branch: master by default, git config names another, none says not checked", () => {
  const repo = tempDir();
  gitOut(repo, "init", "-q", "-b", "master");
  commitFile(repo, "a.txt", "1\n");
  const wt = join(tempDir("handoff-wt-"), "alice");
  gitOut(repo, "worktree", "add", "-q", "-b", "alice-work", wt, "master");
  assert.is(cli(["session", "start", "--objective", "x"], { cwd: wt, agent: "alice" }).code, 0);
  const m = cli(["conflicts", "--json"], { cwd: repo, agent: "lead" });
  assert.is(m.json.integration, "master");
  assert.equal(m.json.pairs.map((p: { b: { branch: string }; error: string | null }) => [p.b.branch, p.error]), [["master", null]]);

  gitOut(repo, "branch", "-m", "master", "trunk");
  const none = cli(["conflicts", "--json"], { cwd: repo, agent: "lead" });
  assert.is(none.json.integration, null);
  const text = cli(["conflicts"], { cwd: repo, agent: "lead" }).stdout;
  assert.match(text, /against the integration branch: not checked \(none found: set git config handoff\.integrationBranch\)/);
  assert.not.match(text, /no conflicts predicted across/);

  gitOut(repo, "config", "handoff.integrationBranch", "trunk");
  assert.is(cli(["conflicts", "--json"], { cwd: repo, agent: "lead" }).json.integration, "trunk");
});

test("the integration branch is found without git: the config read in process, the branch and the remote's HEAD as files", () => {
  const repo = tempDir();
  gitOut(repo, "init", "-q", "-b", "main");
  commitFile(repo, "a.txt", "1\n");
  const found = () => {
    const r = traced(repo, "lead", ["conflicts", "--json"]);
    return [r.json.integration, r.git.filter((g) => /^git (config|rev-parse|symbolic-ref)/.test(g))];
  };
  assert.equal(found(), ["main", []]);
  gitOut(repo, "branch", "trunk");
  gitOut(repo, "config", "handoff.integrationBranch", "trunk");
  assert.equal(found(), ["trunk", []]);
  // The sync remote's HEAD names it (a symbolic ref, never packed: its file).
  gitOut(repo, "config", "--unset", "handoff.integrationBranch");
  gitOut(repo, "remote", "add", "origin", repo);
  gitOut(repo, "update-ref", "refs/remotes/origin/trunk", "HEAD");
  gitOut(repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk");
  assert.equal(found(), ["trunk", []]);
  // What the in-process reader does not read (an include) is git's to answer, as before.
  gitOut(repo, "config", "include.path", join(repo, ".git", "none.gitconfig"));
  const viaGit = found();
  assert.is(viaGit[0], "trunk");
  assert.ok((viaGit[1] as string[]).length > 0, "git answered");
});

test("no integration branch to find: not looked up again by every command, until a branch or a setting appears", () => {
  const repo = tempDir();
  gitOut(repo, "init", "-q", "-b", "trunk");
  commitFile(repo, "a.txt", "1\n");
  // An include puts the config beyond the in-process reader: the lookup is git's, seen in GIT_TRACE.
  writeFileSync(join(repo, ".git", "extra.gitconfig"), "");
  gitOut(repo, "config", "include.path", join(repo, ".git", "extra.gitconfig"));
  const lookups = () => {
    const trace = join(tempDir("handoff-trace-"), "trace");
    const r = cli(["conflicts", "--json"], { cwd: repo, agent: "lead", env: { GIT_TRACE: trace } });
    let text = "";
    try {
      text = readFileSync(trace, "utf8");
    } catch {
      /* no git process */
    }
    return { integration: r.json.integration, lookups: (text.match(/handoff\.integrationBranch|init\.defaultBranch/g) ?? []).length };
  };
  // What the lookup reads, changed within the last two seconds, might change again unseen within
  // its timestamp's tick: then nothing is kept. Made older here, as a repository is between commands.
  const recent = lookups();
  assert.equal(recent.integration, null);
  assert.ok(recent.lookups > 0);
  // Stamped ahead, so it stays "a moment ago" however long the commands above took on a loaded machine.
  const soon = new Date(Date.now() + 60_000);
  utimesSync(join(repo, ".git/refs/heads"), soon, soon);
  assert.ok(lookups().lookups > 0, "a branch folder changed a moment ago: looked up again");
  assert.ok(lookups().lookups > 0, "and again: an answer from what changed a moment ago is not kept");
  const past = new Date(Date.now() - 10_000);
  utimesSync(join(repo, ".git/refs/heads"), past, past);
  assert.equal(lookups().integration, null);
  assert.equal(lookups(), { integration: null, lookups: 0 }, "the answer kept while nothing it read changed");
  gitOut(repo, "branch", "main");
  assert.is(lookups().integration, "main", "a new branch is found");
  gitOut(repo, "branch", "-D", "main");
  assert.is(lookups().integration, null);
  gitOut(repo, "pack-refs", "--all");
  assert.is(lookups().integration, null);
  gitOut(repo, "update-ref", "refs/heads/master", gitOut(repo, "rev-parse", "HEAD"));
  gitOut(repo, "pack-refs", "--all");
  assert.is(lookups().integration, "master", "a branch that arrives packed is found");
});

test("a found branch that stops being the answer: the remote's HEAD set, a main beside the master, the policy of the new one at once", () => {
  const repo = tempDir();
  gitOut(repo, "init", "-q", "-b", "master");
  commitFile(repo, ".handoff.yaml", "max_concurrent: 1\n", "policy on master");
  gitOut(repo, "checkout", "-q", "-b", "dev");
  commitFile(repo, ".handoff.yaml", "mode: strict\n", "strict on dev");
  gitOut(repo, "checkout", "-q", "master");
  const mode = () => cli(["check", "x.ts", "--json"], { cwd: repo, agent: "lead" }).json.mode;
  // A file changed within the last two seconds is looked up again whatever its stamp says (it may
  // change again unseen within its tick); between commands a repository's files are older than
  // that. Made so here for what a step changed (its modification time: the stamp still differs),
  // so that the comparison of stamps is what is tested.
  const settle = (...files: string[]) => {
    const past = new Date(Date.now() - 10_000);
    for (const f of files) utimesSync(join(repo, ".git", f), past, past);
  };
  settle("refs/heads");
  assert.is(mode(), "balanced", "master: the default branch found");
  gitOut(repo, "remote", "add", "origin", repo);
  gitOut(repo, "update-ref", "refs/remotes/origin/dev", "dev");
  settle("config");
  assert.is(mode(), "balanced", "origin/HEAD not set yet");
  assert.is(mode(), "balanced");
  // The sync remote's HEAD (git clone and newer fetches set it) names dev now.
  gitOut(repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/dev");
  settle("refs/remotes/origin/HEAD");
  assert.is(mode(), "strict", "origin/HEAD names dev: its policy, at once");
  gitOut(repo, "symbolic-ref", "--delete", "refs/remotes/origin/HEAD");
  assert.is(mode(), "balanced");
  // Without the remote's HEAD, main comes before master.
  gitOut(repo, "branch", "main", "dev");
  settle("refs/heads");
  assert.is(mode(), "strict", "a main made beside the master is found before it");
});

test("the same branch found another way (the remote's HEAD set to it, then removed): status says how, at once", () => {
  // Found by the cache-coherence walk (HANDOFF_FUZZ_MCP=0 HANDOFF_FUZZ_SEED=1093, step 7): the
  // cached policy kept "the main branch" after `git remote set-head origin main`.
  const repo = tempDir();
  gitOut(repo, "init", "-q", "-b", "main");
  commitFile(repo, ".handoff.yaml", "mode: strict\n", "policy on main");
  gitOut(repo, "remote", "add", "origin", repo);
  gitOut(repo, "update-ref", "refs/remotes/origin/main", "main");
  const policy = () => cli(["status", "--json", "--no-conflicts"], { cwd: repo, agent: "lead" }).json.policy;
  assert.equal([policy().branch, policy().from], ["main", "the main branch"]);
  gitOut(repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main");
  assert.equal([policy().branch, policy().from], ["main", "origin/HEAD"]);
  gitOut(repo, "symbolic-ref", "--delete", "refs/remotes/origin/HEAD");
  assert.equal([policy().branch, policy().from], ["main", "the main branch"]);
});


test("policy.cache of another version, or of none (an older build's), is read as none and written anew", async () => {
  const repo = tempDir();
  gitOut(repo, "init", "-q", "-b", "main");
  commitFile(repo, "a.txt", "1\n");
  const cacheFile = join(repo, ".git/handoff/policy.cache");
  const mode = async () => {
    const store = await openStore({ cwd: repo, agent: "a" });
    store.close();
    return store.config.mode;
  };
  assert.is(await mode(), "balanced");
  const written = JSON.parse(readFileSync(cacheFile, "utf8"));
  assert.is(typeof written.v, "number");
  // The cache's policy made strict under its own key: while it is this build's, it is what counts.
  const plant = (v: unknown) => writeFileSync(cacheFile, JSON.stringify({ ...written, v, data: { mode: "strict" } }));
  plant(written.v);
  assert.is(await mode(), "strict");
  for (const v of [undefined, written.v - 1, written.v + 1]) {
    plant(v);
    assert.is(await mode(), "balanced", `v ${v}`);
    assert.is(JSON.parse(readFileSync(cacheFile, "utf8")).v, written.v, "written anew");
  }
});

test.run();
