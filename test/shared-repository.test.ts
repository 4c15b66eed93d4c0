// A repository shared by a group (`git init --shared=group`, core.sharedRepository): what
// git-handoff writes (loose objects and their fan-out folders, its files under .git/handoff) gets
// the modes git gives its own, so another member of the group can add objects and run
// git-handoff there too.
import { spawnSync } from "node:child_process";
import { chmodSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CONFIG_MEMO } from "../src/git/config-memo.ts";
import { CLI, cleanEnv, cleanupTemp, cli, gitOut, tempDir } from "./support/repo.ts";

test.after(cleanupTemp);

function sharedRepo(): string {
  const dir = tempDir();
  gitOut(dir, "init", "-q", "-b", "main", "--shared=group");
  gitOut(dir, "commit", "-q", "--allow-empty", "-m", "initial");
  return dir;
}

/** Runs `fn` with the process umask (inherited by the processes it starts) set to `mask`. */
function withUmask<T>(mask: number, fn: () => T): T {
  const old = process.umask(mask);
  try {
    return fn();
  } finally {
    process.umask(old);
  }
}

function walk(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    out.push(join(dir, e.name));
    if (e.isDirectory()) walk(join(dir, e.name), out);
  }
  return out;
}

const mode = (p: string) => statSync(p).mode & 0o7777;

/**
 * What .git/handoff holds for the group: all of it but the config memo, which holds this user's
 * own global config as last read (config-memo.ts) and is this user's alone, 0600, in any repository.
 */
function shared(repo: string): string[] {
  const memo = join(repo, ".git", CONFIG_MEMO);
  const all = walk(join(repo, ".git/handoff"));
  if (all.includes(memo)) assert.is(mode(memo).toString(8), "600", memo);
  return all.filter((p) => p !== memo);
}
const fanOuts = (repo: string) => readdirSync(join(repo, ".git/objects")).filter((n) => /^[0-9a-f]{2}$/.test(n)).map((n) => join(repo, ".git/objects", n));

test("in a group-shared repository, object folders and files and .git/handoff get git's group modes", () => {
  withUmask(0o022, () => {
    const repo = sharedRepo();
    assert.is(cli(["task", "add", "shared work", "--id", "t1"], { cwd: repo, agent: "alice" }).code, 0);
    assert.is(cli(["claim", "t1"], { cwd: repo, agent: "alice" }).code, 0);
    // What git itself makes in the same repository.
    writeFileSync(join(repo, "x"), "git's own object\n");
    const gitBlob = gitOut(repo, "hash-object", "-w", "x");
    const gitDirMode = mode(join(repo, ".git/objects", gitBlob.slice(0, 2)));
    assert.is(gitDirMode, 0o2775);
    for (const d of fanOuts(repo)) {
      assert.is(mode(d).toString(8), gitDirMode.toString(8), d);
      for (const f of readdirSync(d)) assert.is(mode(join(d, f)).toString(8), "444", join(d, f));
    }
    const handoff = join(repo, ".git/handoff");
    assert.ok((mode(handoff) & 0o2070) === 0o2070, mode(handoff).toString(8));
    for (const p of shared(repo)) {
      const st = statSync(p);
      if (st.isDirectory()) assert.ok((st.mode & 0o2070) === 0o2070, `${p} ${(st.mode & 0o7777).toString(8)}`);
      else assert.ok((st.mode & 0o040) !== 0 && (!(st.mode & 0o200) || (st.mode & 0o020) !== 0), `${p} ${(st.mode & 0o7777).toString(8)}`);
    }
  });
});

test("under umask 077 in a group-shared repository, objects are readable by the group, as git's", () => {
  withUmask(0o077, () => {
    const repo = sharedRepo();
    assert.is(cli(["task", "add", "private umask", "--id", "t1"], { cwd: repo, agent: "alice" }).code, 0);
    writeFileSync(join(repo, "y"), "git's own object under umask 077\n");
    const gitBlob = gitOut(repo, "hash-object", "-w", "y");
    const gitObject = join(repo, ".git/objects", gitBlob.slice(0, 2), gitBlob.slice(2));
    assert.is(mode(gitObject).toString(8), "440");
    for (const d of fanOuts(repo)) {
      assert.is(mode(d).toString(8), "2770", d);
      for (const f of readdirSync(d)) assert.is(mode(join(d, f)).toString(8), "440", join(d, f));
    }
  });
});

test("core.sharedRepository=0640 gives exactly that mode, as git does", () => {
  withUmask(0o022, () => {
    const repo = sharedRepo();
    gitOut(repo, "config", "core.sharedRepository", "0640");
    const objects = () => fanOuts(repo).flatMap((d) => readdirSync(d).map((f) => join(d, f)));
    const before = new Set(objects());
    assert.is(cli(["task", "add", "exact mode", "--id", "t1"], { cwd: repo, agent: "alice" }).code, 0);
    const ours = objects().filter((f) => !before.has(f));
    assert.ok(ours.length > 0);
    for (const f of ours) assert.is(mode(f).toString(8), "440", f);
    for (const p of shared(repo)) if (statSync(p).isFile()) assert.is(mode(p) & 0o077, 0o040, p);
  });
});

test("another member of the group adds objects and claims where git-handoff wrote first", () => {
  // Acting as another user needs root and setpriv (CI runs as root): without them this fails, it does not pass unseen.
  assert.ok(process.getuid?.() === 0 && spawnSync("setpriv", ["--version"]).status === 0, "this test needs root and setpriv, to act as another user");
  withUmask(0o022, () => {
    const home = tempDir();
    chmodSync(home, 0o755);
    const repo = sharedRepo();
    // The repository's folder and the runner's temp folder above it are made with mode 0700.
    chmodSync(repo, 0o755);
    chmodSync(join(repo, ".."), 0o755);
    assert.is(cli(["task", "add", "first", "--id", "t1"], { cwd: repo, agent: "alice" }).code, 0);
    assert.is(cli(["task", "add", "second", "--id", "t2"], { cwd: repo, agent: "alice" }).code, 0);
    assert.is(cli(["claim", "t1"], { cwd: repo, agent: "alice" }).code, 0);
    const global = join(home, "gitconfig");
    writeFileSync(global, "[safe]\n\tdirectory = *\n");
    chmodSync(global, 0o644);
    // uid 65534 in the repository's group (root's, gid 0), and no other.
    const asOther = (cmd: string, args: string[], input = "") =>
      spawnSync("setpriv", ["--reuid=65534", "--regid=0", "--clear-groups", cmd, ...args], {
        cwd: repo,
        input,
        encoding: "utf8",
        env: cleanEnv({ HOME: home, GIT_CONFIG_GLOBAL: global, HANDOFF_AGENT: "bob", GIT_AUTHOR_NAME: "b", GIT_AUTHOR_EMAIL: "b@b", GIT_COMMITTER_NAME: "b", GIT_COMMITTER_EMAIL: "b@b" }),
      });
    // A blob whose fan-out folder git-handoff made.
    const ours = new Set(fanOuts(repo).map((d) => d.slice(-2)));
    let text = "";
    for (let i = 0; i < 100_000 && !text; i++) {
      const id = spawnSync("git", ["hash-object", "--stdin"], { input: `x${i}`, encoding: "utf8" }).stdout.trim();
      if (ours.has(id.slice(0, 2)) && !statSync(join(repo, ".git/objects", id.slice(0, 2), id.slice(2)), { throwIfNoEntry: false })) text = `x${i}`;
    }
    assert.ok(text);
    const w = asOther("git", ["hash-object", "-w", "--stdin"], text);
    assert.is(w.status, 0, w.stderr);
    const c = asOther(process.execPath, [CLI, "claim", "t2"]);
    assert.is(c.status, 0, c.stderr);
  });
});

test.run();
