// Opening a store reads git's configuration files once (config-scan.ts ConfigRead): discovery,
// the ref write policy, core.sharedRepository, whether refs are files and the policy cache's key
// all ask one read of each file, and the questions discovery asked of the repository's config
// with patterns are asked of its parse. What they answer must not change, and a process that
// opens the store again (a long-running server after a change) must see the files as they are.
import fs, { utimesSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ConfigRead } from "../src/git/config-read.ts";
import { wantsObjectFsync } from "../src/git/object-writer.ts";
import { configuredRemote } from "../src/git/configured-remote.ts";
import { discoverRepo, discoveryFlags } from "../src/git/repo.ts";
import { loadRepositoryConfig } from "../src/store/repo-policy.ts";
import { openStore } from "../src/store/store.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { sync } from "../src/sync/sync.ts";
import { twoClones } from "./support/servers.ts";
import { cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

/** The paths `fn` read with readFileSync, in order. */
async function readsOf(fn: () => Promise<unknown>): Promise<string[]> {
  const reads: string[] = [];
  const original = fs.readFileSync;
  fs.readFileSync = ((path: fs.PathOrFileDescriptor, ...rest: unknown[]) => {
    reads.push(String(path));
    return (original as (...a: unknown[]) => unknown)(path, ...rest);
  }) as typeof fs.readFileSync;
  syncBuiltinESMExports();
  try {
    await fn();
  } finally {
    fs.readFileSync = original;
    syncBuiltinESMExports();
  }
  return reads;
}

test("one opening reads the repository's config once, whatever it asks of it", async () => {
  const repo = tempRepo();
  gitOut(repo, "config", "handoff.integrationBranch", "main"); // the policy lookup asks the config too
  (await openStore({ cwd: repo, agent: "a" })).close(); // the policy cache written
  for (const warm of [false, true]) {
    let store: Awaited<ReturnType<typeof openStore>> | undefined;
    const reads = await readsOf(async () => void (store = await openStore({ cwd: repo, agent: "a", warm })));
    store!.close();
    assert.is(reads.filter((p) => p === `${repo}/.git/config`).length, 1, `warm: ${warm}: ${reads.join(" ")}`);
  }
});

test("a store opened again sees the config as it is now: nothing read is kept across openings", async () => {
  const repo = tempRepo();
  gitOut(repo, "branch", "dev");
  const first = await openStore({ cwd: repo, agent: "a", warm: true });
  assert.is(first.policySource?.branch, "main");
  first.close();
  gitOut(repo, "config", "handoff.integrationBranch", "dev");
  const second = await openStore({ cwd: repo, agent: "a", warm: true });
  assert.is(second.policySource?.branch, "dev");
  assert.is(second.policySource?.from, "git config handoff.integrationBranch");
  second.close();
});

test("a one-shot store asks later questions of its opening's read until the repository's config changes", async () => {
  const repo = tempRepo();
  const store = await openStore({ cwd: repo, agent: "a" });
  const reads = await readsOf(async () => assert.is(await store.syncRemote(), null));
  assert.equal(reads.filter((p) => p.endsWith("config")), [], "nothing read again");
  gitOut(repo, "config", "handoff.remote", "hub");
  assert.is(await store.syncRemote(), "hub", "the change is seen");
  store.close();
});

test("a one-shot sync reads this clone's config once, and the remote's once", async () => {
  const { a, bare } = twoClones();
  assert.is(cli(["sync"], { cwd: a, agent: "a" }).code, 0); // caches and tracking files laid, by another process
  let store: Awaited<ReturnType<typeof openSyncedStore>> | undefined;
  const reads = await readsOf(async () => {
    store = await openSyncedStore({ cwd: a, agent: "a" });
    await sync(store);
  });
  store!.close();
  const count = (path: string) => reads.filter((p) => p === path).length;
  assert.is(count(`${a}/.git/config`), 1, reads.join(" "));
  assert.ok(count(`${bare}/config`) <= 1, reads.join(" "));
});

test("the policy loaded on its own (the fast cache's refresh) stats the other config files for its key, and reads none", async () => {
  const repo = tempRepo();
  const home = tempDir();
  writeFileSync(`${home}/.gitconfig`, "[user]\n\tname = x\n");
  // Files changed within two seconds make the key racy (repo-policy.ts): these are older.
  const old = new Date(Date.now() - 60_000);
  for (const f of [`${home}/.gitconfig`, `${repo}/.git/config`, `${repo}/.git/refs/heads`]) utimesSync(f, old, old);
  const was = process.env.HOME;
  process.env.HOME = home;
  try {
    (await openStore({ cwd: repo, agent: "a" })).close(); // the policy cache and its key written
    const reads = await readsOf(() => loadRepositoryConfig(discoverRepo(repo)));
    assert.not.ok(reads.includes(`${home}/.gitconfig`), reads.join(" "));
  } finally {
    process.env.HOME = was;
  }
});

test("discovery asks git where the config says the work tree is elsewhere, the repository bare, or objects sha256", () => {
  const repo = tempRepo();
  assert.is(discoverRepo(repo).workTree, repo);
  const elsewhere = tempDir();
  gitOut(repo, "config", "core.worktree", elsewhere);
  assert.is(discoverRepo(repo).workTree, elsewhere, "core.worktree: git's answer");
  gitOut(repo, "config", "--unset", "core.worktree");
  gitOut(repo, "config", "core.bare", "TRUE");
  assert.is(discoverRepo(repo).workTree, null, "core.bare = TRUE: git's answer, a bare repository");
  assert.is(discoverRepo(repo).isBare, true);
  gitOut(repo, "config", "core.bare", "false");
  assert.is(discoverRepo(repo).workTree, repo);

  const sha = tempDir();
  gitOut(sha, "init", "-q", "--object-format=sha256");
  assert.is(discoverRepo(sha).objectFormat, "sha256");
  assert.is(discoverRepo(sha).workTree, sha);
});

test("a config naming another ref storage keeps refs from being read as files", async () => {
  const repo = tempRepo();
  gitOut(repo, "config", "extensions.refStorage", "files"); // git 2.39 reads format 0's extensions as nothing
  const store = await openStore({ cwd: repo, agent: "a" });
  assert.is(store.usesRefFiles, false);
  store.close();
  gitOut(repo, "config", "--unset", "extensions.refStorage");
  const plain = await openStore({ cwd: repo, agent: "a" });
  assert.is(plain.usesRefFiles, true);
  plain.close();
});

test("the sync remote is looked for where the config has a remote or handoff section, and only there", async () => {
  const repo = tempRepo();
  const common = `${repo}/.git`;
  const remote = () => configuredRemote(repo, common, new ConfigRead());
  assert.equal(await remote(), { name: null, explicit: false, url: null });
  gitOut(repo, "remote", "add", "origin", tempDir());
  assert.is((await remote()).name, "origin");
  gitOut(repo, "remote", "remove", "origin");
  gitOut(repo, "config", "handoff.remote", "hub");
  assert.equal(await remote(), { name: "hub", explicit: true, url: null });
  // A section the pattern took for a remote one ([remote-x]) is read, and names none.
  writeFileSync(`${common}/config`, "[core]\n\tbare = false\n[remote-x]\n\ty = 1\n");
  assert.equal(await remote(), { name: null, explicit: false, url: null });
});

test("whether objects are flushed reads the same from the opening's parse as from the file's text", () => {
  const repo = tempRepo();
  const config = `${repo}/.git/config`;
  const lines = [
    "fsyncObjectFiles = true",
    "FSYNCOBJECTFILES=On",
    "fsyncobjectfiles = true # said so",
    "fsyncobjectfiles = false",
    "fsyncobjectfiles",
    "fsync = all",
    "fsync = reference, Loose-Object",
    "fsync = reference",
    "fsync = all # c",
    "fsync = committed,",
    "fsync",
    "fsync =",
    "fsync = objects-x",
  ];
  let [n, yes] = [0, 0];
  for (const a of lines)
    for (const b of ["", "all", ...lines])
      for (const between of ["\n[other]\n", "\n"]) {
        // (The pattern's blanks after `fsync =` run on into the next line: "all" there counts.)
        writeFileSync(config, `[core]\n\trepositoryformatversion = 0\n\t${a}${between}\t${b}\n`);
        assert.is(wantsObjectFsync(`${repo}/.git`, new ConfigRead()), wantsObjectFsync(`${repo}/.git`), JSON.stringify(`${a}${between}${b}`));
        n++;
        yes += wantsObjectFsync(`${repo}/.git`) ? 1 : 0;
      }
  assert.ok(yes > 20 && yes < n - 20, "both answers are among the cases");
});

test("discovery's questions read the same from the opening's parse as from the file's text", () => {
  const dir = tempDir();
  const config = `${dir}/config`;
  const lines = ["bare = true", "BARE=True", "bare = false", "bare = trueish", "bare", "bare =", "worktree = /x", "worktreeConfig = true", "objectFormat = sha256", "objectformat = sha1", "objectformat =", "true", "sha256", "x = 1"];
  const seen = new Set<string>();
  for (const a of lines)
    for (const b of ["", ...lines]) {
      writeFileSync(config, `[core]\n\t${a}\n\t${b}\n`);
      const text = `[core]\n\t${a}\n\t${b}\n`;
      const flags = discoveryFlags(text, new ConfigRead().plain(config));
      assert.equal(flags, discoveryFlags(text, null), JSON.stringify(text));
      seen.add(JSON.stringify(flags));
    }
  assert.is(seen.size, 4, "every answer is among the cases");
});

test.run();
