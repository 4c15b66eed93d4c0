// A fetch from a remote that is a folder on this disk reads the few new objects from its files
// (src/git/folder-fetch.ts): loose objects only, each a plain file (never through a link, never a
// FIFO), inflated within its bound and hashed to the name it is filed under. Anything else is
// upload-pack's, as before: an object packed there, a file that is not the object its name says.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { copyFileSync, existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { cleanupTemp, cli, gitOut, tempDir } from "./support/repo.ts";
import { storeTasks } from "./support/seed.ts";
import { twoClones } from "./support/servers.ts";
import { fetchFromFolder } from "../src/git/folder-fetch.ts";
import { openStore } from "../src/store/store.ts";

test.after(() => cleanupTemp());

const TASK = "refs/handoff/tasks/ship";

/** A remote by path holding task `ship` (pushed, so its objects are loose there) and a clone `b` that has not fetched it. */
async function remoteWithTask() {
  const { bare, a, b } = twoClones();
  await storeTasks({ cwd: a, agent: "lead", push: true }, [{ id: "ship", objective: "ship it" }]);
  const tip = gitOut(bare, "rev-parse", TASK).trim();
  const tree = gitOut(bare, "rev-parse", `${tip}^{tree}`).trim();
  // The task's files (the record and its format): the record is the one spoiled below.
  const blobs = gitOut(bare, "ls-tree", tree).trim().split("\n").map((l) => l.split(/\s+/));
  const blob = blobs.find((e) => e[3] === "task.json")![2]!;
  return { bare, a, b, tip, tree, blob, blobs: blobs.map((e) => e[2]!), loose: (oid: string) => join(bare, "objects", oid.slice(0, 2), oid.slice(2)) };
}

/** What `b` reads of the task from the folder: its objects by id, or null (upload-pack's). */
async function fetched(b: string, tip: string, expected: string | null = null) {
  const store = await openStore({ cwd: b, agent: "bob" });
  try {
    const got = await fetchFromFolder(store.remoteSource, "origin", [{ new: tip, expected }], (oid) => store.reader.readHere(oid));
    return got && [...got.keys()].sort();
  } finally {
    store.close();
  }
}

/** The git commands a run started, from its GIT_TRACE file. */
function gitRuns(trace: string): string[] {
  if (!existsSync(trace)) return [];
  return [...readFileSync(trace, "utf8").matchAll(/trace: built-in: (git [^\n]*)/g)].map((m) => m[1]!);
}

test("a task's new objects, loose in the folder, are read from its files; a sync then starts no upload-pack", async () => {
  const { a, b, tip, tree, blobs, bare } = await remoteWithTask();
  assert.equal(await fetched(b, tip), [tip, tree, ...blobs].sort());
  const trace = join(tempDir(), "trace");
  const s = cli(["sync", "--json"], { cwd: b, agent: "bob", env: { GIT_TRACE: trace } });
  assert.is(s.code, 0, s.stderr);
  assert.is(gitOut(b, "rev-parse", TASK).trim(), tip);
  assert.is(gitOut(b, "fsck", "--no-dangling", "--no-progress").trim(), "");
  assert.not.ok(gitRuns(trace).some((r) => /^git (fetch|upload-pack)/.test(r)), gitRuns(trace).join("\n"));
  // The task claimed on the remote: only what its new commit brings is read, down to the tip b has.
  assert.is(cli(["claim", "ship", "--push"], { cwd: a, agent: "lead" }).code, 0);
  const next = gitOut(bare, "rev-parse", TASK).trim();
  const got = await fetched(b, next, tip);
  assert.ok(got && got.includes(next) && !got.includes(tip) && got.length <= 4, String(got));
});

test("an object packed in the folder is upload-pack's: the sync starts one and still takes the task", async () => {
  const { b, tip, bare } = await remoteWithTask();
  gitOut(bare, "repack", "-a", "-d", "-q");
  gitOut(bare, "prune-packed");
  assert.is(await fetched(b, tip), null);
  const trace = join(tempDir(), "trace");
  const s = cli(["sync"], { cwd: b, agent: "bob", env: { GIT_TRACE: trace } });
  assert.is(s.code, 0, s.stderr);
  assert.is(gitOut(b, "rev-parse", TASK).trim(), tip);
  assert.is(gitRuns(trace).filter((r) => r.startsWith("git upload-pack")).length, 1, gitRuns(trace).join("\n"));
});

test("a loose file that is a link, a FIFO, or another object's bytes is not read: upload-pack's", async () => {
  for (const kind of ["link", "fifo", "other"] as const) {
    const { b, tip, blob, blobs, loose } = await remoteWithTask();
    const file = loose(blob);
    if (kind === "link") {
      const copy = join(tempDir(), "copy");
      copyFileSync(file, copy);
      rmSync(file);
      symlinkSync(copy, file);
    } else if (kind === "fifo") {
      rmSync(file);
      execFileSync("mkfifo", [file]);
    } else {
      // A well-formed loose blob, filed under the record's name but another blob's bytes (the format file's).
      rmSync(file);
      writeFileSync(file, readFileSync(loose(blobs.find((o) => o !== blob)!)));
    }
    assert.is(await fetched(b, tip), null, kind);
  }
});

test("a hundred objects or more (a first sync) are upload-pack's, kept as a pack, after at most a hundred reads", async () => {
  const { a, b, bare } = await remoteWithTask();
  await storeTasks({ cwd: a, agent: "lead" }, Array.from({ length: 40 }, (_, i) => ({ id: `t-${i}`, objective: `task ${i}` })));
  assert.is(cli(["sync"], { cwd: a, agent: "lead" }).code, 0);
  const tips = gitOut(bare, "for-each-ref", "--format=%(objectname)", "refs/handoff/tasks/").trim().split("\n");
  assert.is(tips.length, 41);
  const store = await openStore({ cwd: b, agent: "bob" });
  let reads = 0;
  try {
    const got = await fetchFromFolder(store.remoteSource, "origin", tips.map((t) => ({ new: t, expected: null })), (oid) => (reads++, store.reader.readHere(oid)));
    assert.is(got, null);
    assert.ok(reads <= 100, `${reads} objects looked for here`);
  } finally {
    store.close();
  }
  const trace = join(tempDir(), "trace");
  assert.is(cli(["sync"], { cwd: b, agent: "bob", env: { GIT_TRACE: trace } }).code, 0);
  assert.is(gitRuns(trace).filter((r) => r.startsWith("git upload-pack")).length, 1, gitRuns(trace).join("\n"));
  assert.is(gitOut(b, "rev-parse", "refs/handoff/tasks/t-39").trim(), gitOut(bare, "rev-parse", "refs/handoff/tasks/t-39").trim());
});

test("an object past the size read from files is upload-pack's", async () => {
  const { b, bare } = await remoteWithTask();
  const big = join(tempDir(), "big");
  writeFileSync(big, Buffer.alloc(2 * 1024 * 1024, "x"));
  const blob = gitOut(bare, "hash-object", "-w", big).trim();
  const tree = execFileSync("git", ["mktree"], { cwd: bare, input: `100644 blob ${blob}\ttask.json\n`, encoding: "utf8" }).trim();
  const commit = gitOut(bare, "commit-tree", tree, "-m", "big").trim();
  assert.ok(existsSync(join(bare, "objects", blob.slice(0, 2), blob.slice(2))), "loose");
  assert.is(await fetched(b, commit), null);
});

test.run();
