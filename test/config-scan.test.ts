// One-shot commands write refs in-process only when git's configuration, read from its files
// (config-scan.ts), asks for nothing only git does; wherever the files are beyond the reader, git
// is asked. The policy read from the files must be the one git's own listing gives.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { scanRefWritePolicy, scanRemoteSettings, watchedEntries } from "../src/git/config-scan.ts";
import { refWritePolicy } from "../src/git/loose-ref-writer.ts";
import { CLI, cleanEnv, cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("the watched keys of a plain file, as git lists them; anything beyond the reader is null", () => {
  assert.is(watchedEntries("[core]\n\tbare = false\n\thooksPath = .husky\n[user]\n\tname = x\n"), "core.hookspath\n.husky\0");
  assert.is(watchedEntries("[Core]\n  LogAllRefUpdates = always ; say so\n"), "core.logallrefupdates\nalways\0");
  assert.is(watchedEntries("[core]\n\tfsync\n"), "core.fsync\0", "a key alone is true");
  assert.is(watchedEntries('[core "x"]\n\thooksPath = y\n'), "", "a subsection is another section");
  assert.is(watchedEntries("[remote \"origin\"]\n\turl = \"https://x\"\n"), "", "quotes elsewhere are not ours to read");
  assert.is(watchedEntries("[include]\n\tpath = other\n"), null);
  assert.is(watchedEntries('[includeIf "gitdir:~/w/"]\n\tpath = other\n'), null);
  assert.is(watchedEntries('[core]\n\thooksPath = "my hooks"\n'), null, "a quoted value");
  assert.is(watchedEntries("[core]\n\thooksPath = a\\\nb\n"), null, "a continued line");
  assert.is(watchedEntries("[core\n"), null, "a broken header");
});

/** The policy git's own listing gives for `repo` under `env`. */
function gitsPolicy(repo: string, env: NodeJS.ProcessEnv) {
  const r = spawnSync("git", ["config", "--null", "--list"], { cwd: repo, env, encoding: "utf8" });
  return refWritePolicy(r.stdout, `${repo}/.git`, repo);
}

test("the policy read from the files is git's, across scopes; includes and `git -c` go to git", () => {
  const home = tempDir();
  const env = cleanEnv({ HOME: home, XDG_CONFIG_HOME: join(home, "xdg"), GIT_CONFIG_NOSYSTEM: "1" });
  delete env.GIT_CONFIG_GLOBAL;
  const repo = tempRepo();
  const scan = () => scanRefWritePolicy(env, `${repo}/.git`, `${repo}/.git`, repo);
  assert.equal(scan(), gitsPolicy(repo, env), "a plain repository");
  assert.equal(scan(), { logAll: false, shared: false, hooksDir: `${repo}/.git/hooks`, fsync: false, lockTimeoutMs: 100, sharedPerm: 0 });
  writeFileSync(join(home, ".gitconfig"), "[core]\n\thooksPath = /srv/hooks\n");
  assert.equal(scan(), gitsPolicy(repo, env), "a global hooks path");
  assert.is(scan()!.hooksDir, "/srv/hooks");
  mkdirSync(join(home, "xdg", "git"), { recursive: true });
  writeFileSync(join(home, "xdg", "git", "config"), "[core]\n\tlogAllRefUpdates = always\n\thooksPath = /xdg/hooks\n");
  assert.equal(scan(), gitsPolicy(repo, env), "the XDG file is read before ~/.gitconfig");
  gitOut(repo, "config", "core.hooksPath", "local-hooks");
  gitOut(repo, "config", "core.sharedRepository", "group");
  gitOut(repo, "config", "core.fsync", "reference");
  gitOut(repo, "config", "core.filesRefLockTimeout", "250");
  assert.equal(scan(), gitsPolicy(repo, env), "the repository's own settings win");
  // `git init` wrote core.logAllRefUpdates=true into the repository's file, which overrides the XDG "always".
  assert.equal(scan(), { logAll: false, shared: true, hooksDir: `${repo}/local-hooks`, fsync: true, lockTimeoutMs: 250, sharedPerm: 0o660 });
  const other = tempRepo();
  gitOut(other, "config", "include.path", join(home, "more"));
  assert.is(scanRefWritePolicy(env, `${other}/.git`, `${other}/.git`, other), null, "an include");
  assert.is(scanRefWritePolicy({ ...env, GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "core.fsync", GIT_CONFIG_VALUE_0: "all" }, `${other}/.git`, `${other}/.git`, other), null, "GIT_CONFIG_COUNT");
  assert.is(scanRefWritePolicy({ ...env, GIT_CONFIG_PARAMETERS: "'core.fsync'='all'" }, `${other}/.git`, `${other}/.git`, other), null, "git -c");
  const global = join(home, "global-config");
  writeFileSync(global, "[core]\n\tsharedRepository = true\n");
  assert.is(scanRefWritePolicy({ ...env, GIT_CONFIG_GLOBAL: global }, `${other}/.git`, `${other}/.git`, other), null, "the include still counts");
  // GIT_CONFIG_NOSYSTEM is a boolean to git: "0" still reads the system file (here: the one named).
  const system = join(home, "system-config");
  writeFileSync(system, "[core]\n\tsharedRepository = group\n");
  const plain = tempRepo();
  const withSystem = { ...env, GIT_CONFIG_NOSYSTEM: "0", GIT_CONFIG_SYSTEM: system };
  assert.equal(scanRefWritePolicy(withSystem, `${plain}/.git`, `${plain}/.git`, plain), gitsPolicy(plain, withSystem), "GIT_CONFIG_NOSYSTEM=0");
  assert.is(scanRefWritePolicy(withSystem, `${plain}/.git`, `${plain}/.git`, plain)!.shared, true);
  assert.is(scanRefWritePolicy({ ...withSystem, GIT_CONFIG_NOSYSTEM: "1" }, `${plain}/.git`, `${plain}/.git`, plain)!.shared, false);
  const third = tempRepo();
  assert.equal(scanRefWritePolicy({ ...env, GIT_CONFIG_GLOBAL: global }, `${third}/.git`, `${third}/.git`, third), gitsPolicy(third, { ...env, GIT_CONFIG_GLOBAL: global }), "GIT_CONFIG_GLOBAL");
});

test("a separate store's policy: the repository's config read where the store includes it, as git reads the store", () => {
  const home = tempDir();
  const env = cleanEnv({ HOME: home, XDG_CONFIG_HOME: join(home, "xdg"), GIT_CONFIG_NOSYSTEM: "1" });
  delete env.GIT_CONFIG_GLOBAL;
  // A folder name git's config would read as a comment unquoted.
  const root = join(tempDir(), "we#ird;name");
  mkdirSync(root);
  gitOut(root, "init", "-q", "-b", "main");
  gitOut(root, "commit", "-q", "--allow-empty", "-m", "initial");
  const moved = spawnSync(process.execPath, [CLI, "store", "--separate"], { cwd: root, env, encoding: "utf8" });
  assert.is(moved.status, 0, moved.stderr);
  const store = `${root}/.git/handoff-store.git`;
  const gits = () => refWritePolicy(spawnSync("git", ["config", "--null", "--list"], { cwd: root, env: { ...env, GIT_DIR: store }, encoding: "utf8" }).stdout, store, null);
  const scan = () => scanRefWritePolicy(env, store, null, null, `${root}/.git`);
  assert.equal(scan(), gits(), "as created");
  gitOut(root, "config", "core.sharedRepository", "group");
  gitOut(root, "config", "core.hooksPath", "/srv/hooks");
  assert.equal(scan(), gits(), "the repository's settings reach the store");
  assert.equal([scan()!.shared, scan()!.hooksDir], [true, "/srv/hooks"]);
  assert.is(scanRefWritePolicy(env, store, null, null, `${home}/elsewhere`), null, "an include of another file is git's to read");
});

test("a cold claim writes its refs in-process (no git started) where the files allow, and through git where they ask for a reflog", () => {
  const repo = tempRepo();
  const env = cleanEnv({ HANDOFF_AGENT: "a1", GIT_TRACE: join(tempDir(), "trace") });
  assert.is(cli(["task", "add", "one", "--id", "t1", "--scope", "src/a.ts"], { cwd: repo, agent: "a1" }).code, 0);
  assert.is(cli(["task", "add", "two", "--id", "t2", "--scope", "src/b.ts"], { cwd: repo, agent: "a1" }).code, 0);
  assert.is(cli(["claim", "t1"], { cwd: repo, agent: "a1" }).code, 0, "the first lease creates the lease ref (through git)");
  const before = gitOut(repo, "rev-parse", "refs/handoff/tasks/t2");
  const r = spawnSync(process.execPath, [CLI, "claim", "t2", "--agent", "a2"], { cwd: repo, env, encoding: "utf8" });
  assert.is(r.status, 0, r.stderr);
  assert.not.ok(spawnSync("cat", [env.GIT_TRACE!], { encoding: "utf8" }).stdout.includes("update-ref"), "no git update-ref");
  assert.is.not(gitOut(repo, "rev-parse", "refs/handoff/tasks/t2"), before);
  assert.match(cli(["task", "show", "t2"], { cwd: repo, agent: "a1" }).stdout, /claimed/);
  gitOut(repo, "fsck", "--strict", "--no-dangling");
  // With reflogs for every ref, git writes (and logs) the update.
  gitOut(repo, "config", "core.logAllRefUpdates", "always");
  assert.is(cli(["done", "t2", "--agent", "a2"], { cwd: repo, agent: "a2" }).code, 0);
  assert.match(gitOut(repo, "reflog", "show", "refs/handoff/tasks/t2"), /t2/, "git logged the update");
});

test("the settings a sync remote is chosen by, read from the files, are git's own --get-regexp answer", () => {
  const home = tempDir();
  const env = cleanEnv({ HOME: home, XDG_CONFIG_HOME: join(home, "xdg"), GIT_CONFIG_NOSYSTEM: "1" });
  delete env.GIT_CONFIG_GLOBAL;
  const repo = tempRepo();
  const gits = () =>
    spawnSync("git", ["config", "--get-regexp", "^(handoff\\.remote|handoff\\.remotetimeout|handoff\\.machine|remote\\..*\\.(url|handoffrefprefix))$"], { cwd: repo, env, encoding: "utf8" }).stdout;
  const scan = () => scanRemoteSettings(env, `${repo}/.git`);
  assert.is(scan(), gits(), "nothing set");
  gitOut(repo, "remote", "add", "origin", "https://example.invalid/a.git");
  gitOut(repo, "remote", "add", "Coord", "/srv/coord.git");
  gitOut(repo, "config", "remote.Coord.handoffRefPrefix", "refs/heads/handoff/");
  gitOut(repo, "config", "handoff.remote", "Coord");
  gitOut(repo, "config", "handoff.machine", "box-1");
  writeFileSync(join(home, ".gitconfig"), '[handoff]\n\tremoteTimeout = 30s\n[remote "origin"]\n\turl = /global/wins/not.git\n');
  assert.ok(scan() !== null);
  assert.is(scan(), gits(), "local and global, a subsection in capitals, a later value winning");
  assert.match(scan()!, /^remote\.Coord\.handoffrefprefix refs\/heads\/handoff\/$/m);
  gitOut(repo, "config", "remote.origin.url", "https://example.invalid/a b#c.git");
  assert.is(scan(), null, "a value git wrote quoted is git's to read");
});

test.run();
