// A fetch of a commit this clone has no ancestor of (a new task, its inputs, a new result) offers
// only the fetched refs' own earlier tips as "have"s. git's default offers commits of every local
// ref, newest first, and since no common base exists for a new root commit it goes on for up to
// 256 of them, one HTTP request per batch. Counted at a real smart HTTP server's request log, in
// a clone with 300 commits of local history; a plain `git fetch` in the same clone shows the cost
// avoided (so the count can fail).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { followQueue } from "../src/sync/follow-queue.ts";
import { pullRefs } from "../src/sync/follow-ref.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanEnv, cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot, startHttp, type GitServer } from "./support/servers.ts";

const servers: GitServer[] = [];
test.after(async () => {
  for (const s of servers) await s.stop();
  cleanupTemp();
});

/** Two clones over smart HTTP with a request log; `b` holds 300 commits of local history. */
async function setup(): Promise<{ a: string; b: string; log: string }> {
  const served = serveRoot();
  const log = join(tempDir("handoff-requests-"), "log");
  writeFileSync(log, "");
  const http = await startHttp(served.root, log);
  servers.push(http);
  served.bare("neg");
  gitOut(tempRepo(), "push", "-q", `${served.root}/neg.git`, "main");
  const a = cloneOf(http.url("neg"));
  const b = cloneOf(http.url("neg"));
  let stream = "";
  for (let i = 1; i <= 300; i++) {
    stream += `commit refs/heads/history\ncommitter Dev <dev@example.com> ${1_700_000_000 + i} +0000\ndata 4\nc${String(i).padStart(3, "0")}\n\n`;
  }
  const r = spawnSync("git", ["fast-import", "--quiet"], { cwd: b, input: stream, env: cleanEnv() });
  assert.is(r.status, 0, String(r.stderr));
  assert.is(gitOut(b, "rev-list", "--count", "refs/heads/history"), "300");
  return { a, b, log };
}

/** The upload-pack POSTs (one per listing or negotiation round) logged while `fn` ran. */
async function uploadPosts(log: string, fn: () => Promise<unknown> | unknown): Promise<number> {
  const before = readFileSync(log, "utf8").length;
  await fn();
  return readFileSync(log, "utf8").slice(before).split("\n").filter((l) => l.startsWith("POST") && l.includes("git-upload-pack")).length;
}

test("a waiter's pull and a worker's look at the queue fetch a new task in one round; git's default takes several", async () => {
  const { a, b, log } = await setup();
  for (const id of ["n1", "n2", "n3"]) assert.is(cli(["task", "add", `new ${id}`, "--id", id, "--push"], { cwd: a, agent: "alice" }).code, 0);

  // What git's default negotiation costs here, for the same kind of fetch.
  const plain = await uploadPosts(log, () => gitOut(b, "fetch", "-q", "origin", "+refs/handoff/tasks/n2*:refs/plain/n2*"));
  assert.ok(plain >= 4, `a plain fetch took ${plain} upload-pack requests`);

  const store = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
  try {
    const pulled = await uploadPosts(log, async () => assert.equal(await pullRefs(store, "origin", ["refs/handoff/tasks/n1"]), { ok: true, changed: true, refused: [] }));
    // ls-refs, then one fetch request with nothing offered in vain.
    assert.is(pulled, 2);
    assert.is(gitOut(b, "rev-list", "--objects", "--count", "refs/handoff/tasks/n1") !== "", true);

    // The task moves (claimed from A): its earlier tip is offered, and only the claim comes.
    assert.is(cli(["claim", "n1"], { cwd: a, agent: "alice" }).code, 0);
    const moved = await uploadPosts(log, async () => assert.equal(await pullRefs(store, "origin", ["refs/handoff/tasks/n1"]), { ok: true, changed: true, refused: [] }));
    assert.is(moved, 2);
    assert.is(gitOut(b, "rev-parse", "refs/handoff/tasks/n1"), gitOut(a, "rev-parse", "refs/handoff/tasks/n1"));

    // A worker's look at the queue: the tasks' tracking tips only.
    const look = await uploadPosts(log, async () => assert.equal(await followQueue(store, "origin").look(), { ok: true, changed: true }));
    assert.ok(look <= 3, `the queue look took ${look} upload-pack requests (plain fetch: ${plain})`);
    assert.ok(await store.readRef("refs/handoff/tasks/n3"));
  } finally {
    store.close();
  }
  // Every fetched object is here: the refs are complete.
  const fsck = spawnSync("git", ["fsck", "--connectivity-only", "--no-progress"], { cwd: b, env: cleanEnv(), encoding: "utf8" });
  assert.is(fsck.status, 0, fsck.stderr);
});

test("a tip this clone lost: through git the fetch is made again as git's default would, and fails as it would; in process it mends", async () => {
  const { a, b, log } = await setup();
  assert.is(cli(["task", "add", "lost", "--id", "n5", "--push"], { cwd: a, agent: "alice" }).code, 0);
  // A tracking ref naming an object that is not here (a damaged clone, doctor's to repair).
  const lost = "1234567890123456789012345678901234567890";
  mkdirSync(join(b, ".git/refs/handoff-remotes/origin/tasks"), { recursive: true });
  writeFileSync(join(b, ".git/refs/handoff-remotes/origin/tasks/n5"), `${lost}\n`);
  const plain = spawnSync("git", ["fetch", "-q", "origin", "+refs/handoff/tasks/n5*:refs/handoff-remotes/origin/tasks/n5*"], { cwd: b, env: cleanEnv(), encoding: "utf8" });
  assert.is.not(plain.status, 0);
  // Through git (HANDOFF_HTTP_REMOTE=git): the fetch fails as git's own does.
  process.env.HANDOFF_HTTP_REMOTE = "git";
  const store = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
  try {
    let pulled: Awaited<ReturnType<typeof pullRefs>> | undefined;
    const posts = await uploadPosts(log, async () => (pulled = await pullRefs(store, "origin", ["refs/handoff/tasks/n5"])));
    assert.ok(pulled && !pulled.ok);
    // Said after one fetch of git's default negotiation (15 requests here, its rounds over the 300
    // local commits): a damaged tracking ref fails every retry alike, so it is not retried as a
    // lock held by another fetch is (nine fetches and 113 requests, or the deadline on a busy machine).
    assert.ok(posts <= 20, `the failing pull made ${posts} upload-pack requests`);
    // git's own complaint about the damaged ref, not one about the offered commit.
    assert.match((pulled as { message: string }).message, /bad object refs\/handoff-remotes\/origin\/tasks\/n5/);
    assert.match(plain.stderr, /bad object refs\/handoff-remotes\/origin\/tasks\/n5/);
  } finally {
    store.close();
    delete process.env.HANDOFF_HTTP_REMOTE;
  }
  // In process (src/git/http-remote.ts): the lost commit offered is one the remote does not know,
  // so nothing is left out on its account; what came is checked whole, and the tracking ref mends.
  const healed = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
  try {
    const pulled = await pullRefs(healed, "origin", ["refs/handoff/tasks/n5"]);
    assert.ok(pulled.ok, JSON.stringify(pulled));
    assert.is(gitOut(b, "rev-parse", "refs/handoff-remotes/origin/tasks/n5"), gitOut(a, "rev-parse", "refs/handoff/tasks/n5"));
  } finally {
    healed.close();
  }
});

test.run();
