// The warm store (long-lived `git update-ref --stdin`, in-process ref reads) must behave exactly
// like the spawn-per-call store: same compare-and-swap, same refusals, recovery after a lost race.
import { mkdirSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { HandoffError } from "../src/core/errors.ts";
import { discoverRepo } from "../src/git/repo.ts";
import { openSyncedStore as openStore } from "../src/sync/open.ts";
import { claim, release, done } from "../src/store/task-actions.ts";
import { addTask, listingStep, listTasks, loadTask, storedListing } from "../src/store/task-store.ts";
import { listClaimedTasks } from "../src/store/task-listing.ts";
import { cleanupTemp, gitOut, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const task = (id: string) => ({ id, objective: `do ${id}`, priority: 0, scope: [], maxAttempts: 3 });

test("two warm stores in one process: one claim wins, the other is refused with the holder", async () => {
  const repo = tempRepo();
  const a = await openStore({ cwd: repo, agent: "alice", warm: true });
  const b = await openStore({ cwd: repo, agent: "bob", warm: true });
  await addTask(a, task("w1"));
  const results = await Promise.allSettled([claim(a, "w1"), claim(b, "w1")]);
  const won = results.filter((r) => r.status === "fulfilled");
  const lost = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
  assert.is(won.length, 1);
  assert.is(lost.length, 1);
  assert.ok(lost[0]!.reason instanceof HandoffError);
  assert.is((lost[0]!.reason as HandoffError).code, "held_by_other");
  a.close();
  b.close();
});

test("a warm session survives a failed transaction and keeps writing", async () => {
  const repo = tempRepo();
  const a = await openStore({ cwd: repo, agent: "alice", warm: true });
  await addTask(a, task("w2"));
  const { tip } = await loadTask(a, "w2");
  // Move the ref behind the store's back: the next write from a stale view must fail, then retry.
  const r = await a.updateRefs([{ ref: "refs/handoff/tasks/w2", new: tip, old: "1".repeat(40) }]);
  assert.is(r.ok, false);
  await claim(a, "w2");
  await release(a, "w2");
  const after = await loadTask(a, "w2");
  assert.is(after.task.status, "todo");
  assert.is(gitOut(repo, "rev-list", "--count", "refs/handoff/tasks/w2"), "3");
  a.close();
});

test("a warm store's listings, patched from the last one as refs move, are what a fresh read gives, whoever wrote", async () => {
  const repo = tempRepo();
  const a = await openStore({ cwd: repo, agent: "alice", warm: true });
  const b = await openStore({ cwd: repo, agent: "bob", warm: true });
  const ids = Array.from({ length: 12 }, (_, i) => `p${String(i).padStart(2, "0")}`);
  for (const id of ids) await addTask(a, task(id));
  let seed = 5;
  const pick = () => ids[(seed = (seed * 1103515245 + 12345) % 2147483648) % ids.length]!;
  const names = (ts: { id: string; status: string; claim?: { agent: string } | null }[]) => ts.map((t) => `${t.id}:${t.status}:${t.claim?.agent ?? "-"}`);
  let patchedSteps = 0;
  for (let step = 0; step < 60; step++) {
    const [who, other] = step % 3 === 0 ? [b, a] : [a, b];
    const id = pick();
    const op = step % 4;
    await (op === 0 || op === 1 ? claim(who, id) : op === 2 ? release(who, id) : done(who, id)).catch((e) => {
      if (!(e instanceof HandoffError)) throw e;
    });
    // The other store writes too now and then, so the watch sees moves this process did not make.
    if (step % 5 === 0) await claim(other, pick()).catch(() => {});
    const before = await storedListing(a);
    const claimed = await listClaimedTasks(a);
    const fresh = await openStore({ cwd: repo, agent: "alice" });
    try {
      assert.equal(names((await storedListing(a)).tasks), names((await storedListing(fresh)).tasks), `step ${step}: listing`);
      assert.equal(names(claimed), names(await listClaimedTasks(fresh)), `step ${step}: claimed`);
    } finally {
      fresh.close();
    }
    if (listingStep(before)) patchedSteps++;
  }
  assert.ok(patchedSteps >= 30, `most listings were patched from the last one (${patchedSteps} of 60)`);
  a.close();
  b.close();
});

// Other processes move, add, delete and pack refs while a warm store follows the folders: a
// listing of every handoff ref (what sync starts from) must come to what git says within moments,
// never stay behind (a packed-then-recreated folder once kept a stale value for 10 s).
test("a warm store's listing of every handoff ref follows other processes' writes, deletions and packs", async () => {
  const repo = tempRepo();
  const a = await openStore({ cwd: repo, agent: "alice", warm: true });
  const c1 = gitOut(repo, "commit-tree", "-m", "one", gitOut(repo, "mktree"));
  const c2 = gitOut(repo, "commit-tree", "-m", "two", gitOut(repo, "mktree"));
  for (const id of ["q0", "q1", "q2"]) await addTask(a, task(id));
  const folders = ["tasks", "agents", "docs", "reviews"];
  let seed = 11;
  const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  const git = () => gitOut(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/handoff/");
  const ours = async () => (await a.listRefs("refs/handoff/")).map((t) => `${t.name} ${t.oid}`).join("\n");
  const ops: string[] = [];
  for (let step = 0; step < 40; step++) {
    const ref = `refs/handoff/${folders[next(folders.length)]}/r${next(4)}`;
    const op = next(5);
    if (op === 0) gitOut(repo, "update-ref", ref, next(2) ? c1 : c2);
    else if (op === 1) gitOut(repo, "pack-refs", "--all", "--prune");
    else if (op === 2) gitOut(repo, "update-ref", "-d", ref);
    else if (op === 3) gitOut(repo, "update-ref", `refs/handoff/tasks/q${next(3)}`, next(2) ? c1 : c2);
    else await addTask(a, task(`n${step}`));
    ops.push(["write", "pack", "delete", "move task", "add task"][op]!);
    const want = git();
    const deadline = Date.now() + 3_000; // well under the watch's own full walk (10 s)
    let got = await ours();
    while (got !== want && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
      got = await ours();
    }
    assert.is(got, want, `step ${step} (${ops.join(", ")})`);
  }
  assert.ok(ops.includes("pack") && ops.includes("delete") && ops.includes("write"), ops.join(", "));
  a.close();
});

test("in-process ref reads see packed refs and loose refs alike", async () => {
  const repo = tempRepo();
  const a = await openStore({ cwd: repo, agent: "alice" });
  await addTask(a, task("p1"));
  await addTask(a, task("p2"));
  gitOut(repo, "pack-refs", "--all", "--prune");
  await addTask(a, task("p3")); // loose, beside two packed ones
  const { tasks } = await listTasks(a);
  assert.equal(tasks.map((t) => t.id).sort(), ["p1", "p2", "p3"]);
  await claim(a, "p1"); // updating a packed-only ref
  assert.is((await loadTask(a, "p1")).task.status, "claimed");
  gitOut(repo, "gc", "-q"); // objects packed too: reads go through cat-file --batch
  assert.is((await loadTask(a, "p1")).task.claim?.agent, "alice");
  a.close();
});

test("in-process discovery agrees with git in the main worktree, a linked worktree and a subfolder", () => {
  const repo = tempRepo();
  const wt = `${tempDir()}/linked`;
  gitOut(repo, "worktree", "add", "-q", wt);
  gitOut(repo, "checkout", "-q", "-b", "feature");
  for (const [cwd, linked, top] of [
    [repo, false, repo],
    [wt, true, wt],
  ] as const) {
    const info = discoverRepo(cwd);
    assert.is(info.isLinkedWorktree, linked);
    assert.is(info.workTree, top);
    assert.is(info.commonDir, gitOut(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir"));
    assert.is(info.gitDir, gitOut(cwd, "rev-parse", "--path-format=absolute", "--git-dir"));
  }
  mkdirSync(`${repo}/a/b`, { recursive: true });
  assert.is(discoverRepo(`${repo}/a/b`).workTree, repo);
  assert.is(discoverRepo(repo).branch, "feature");
  assert.is(discoverRepo(wt).branch, "linked");
});

test.run();
