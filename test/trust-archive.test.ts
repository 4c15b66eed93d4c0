// The archive is shared state anyone with push access can append to. A forged entry (a live task's
// tip, or a commit nobody has) together with the task's ref deleted on the remote must not make a
// clone drop the task, nor wedge its sync: the archive is refused on receive with its reason, the
// task is kept and pushed back, and the other refs still sync.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { commit, readRecordAt, recordCommit, tree } from "./support/forge.ts";
import { cleanupTemp, cli, gitOut } from "./support/repo.ts";
import { storeClaim, storeSync, storeTasks } from "./support/seed.ts";
import { cloneOf, emptyRemote } from "./support/servers.ts";

test.after(cleanupTemp);

const ok = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};

function world() {
  const bare = emptyRemote();
  return { bare, victim: cloneOf(bare), alice: cloneOf(bare), mallory: cloneOf(bare) };
}

/** Appends to (or starts) refs/handoff/archive in `repo` an entry for `id` at `tip`, as compaction writes it; `parent`: carry the tip as a parent. */
function forgeArchive(repo: string, id: string, tip: string, o: { parent: boolean; record: string }): string {
  // The archive's line starts with a root commit, as compaction starts it.
  const base = (() => {
    try {
      return gitOut(repo, "rev-parse", "--verify", "--quiet", "refs/handoff/archive");
    } catch {
      return commit(repo, { tree: tree(repo, { format: "git-handoff 1\n" }), author: "mallory", message: "start the archive of finished tasks\n" });
    }
  })();
  const t = tree(repo, { format: "git-handoff 1\n", [`${id}.json`]: o.record });
  const body = { archived: { [id]: tip }, at: new Date().toISOString() };
  const c = commit(repo, { tree: t, parent: base, author: "mallory", message: `archived 1 task: ${id}\n\n${JSON.stringify(body, null, 2)}\n` });
  if (!o.parent) {
    gitOut(repo, "update-ref", "refs/handoff/archive", c);
    return c;
  }
  // commit-tree with the task's tip as a second parent, as compaction makes it.
  const withTip = gitOut(repo, "commit-tree", t, "-p", base, "-p", tip, "-m", `archived 1 task: ${id}\n\n${JSON.stringify(body, null, 2)}\n`);
  gitOut(repo, "update-ref", "refs/handoff/archive", withTip);
  return withTip;
}

const has = (repo: string, ref: string) => gitOut(repo, "for-each-ref", "--format=%(refname)", ref) === ref;

test("a forged archive entry for a live, claimed task plus its ref deleted on the remote: every clone keeps the task, the archive is refused", async () => {
  const { bare, victim, alice, mallory } = world();
  // The task, alice's claim and the syncs that spread them: written in-process (support/seed.ts).
  await storeTasks({ cwd: victim, agent: "lead" }, [{ id: "X", objective: "important", scope: ["x/**"], exclusive: true }]);
  await storeSync({ cwd: victim });
  await storeSync({ cwd: alice });
  await storeClaim({ cwd: alice, agent: "alice" }, "X");
  await storeSync({ cwd: victim });
  await storeSync({ cwd: mallory });
  const xTip = gitOut(mallory, "rev-parse", "refs/handoff/tasks/X");
  forgeArchive(mallory, "X", xTip, { parent: true, record: gitOut(mallory, "show", `${xTip}:task.json`) + "\n" });
  gitOut(mallory, "push", "-q", "origin", "refs/handoff/archive");
  gitOut(mallory, "push", "-q", "origin", ":refs/handoff/tasks/X");

  for (const [clone, agent] of [[victim, "lead"], [alice, "alice"]] as const) {
    const s = cli(["sync", "--json"], { cwd: clone, agent });
    assert.is(s.code, 3, `${s.stdout}\n${s.stderr}`);
    const q = s.json.quarantined.find((x: any) => x.ref === "refs/handoff/archive");
    assert.ok(q, JSON.stringify(s.json.quarantined));
    assert.match(q.reason, /archives X at .*, where it is claimed, not finished/, q.reason);
    assert.equal(s.json.removed, [], "nothing dropped on the archive's word");
    assert.ok(has(clone, "refs/handoff/tasks/X"), "the live task stays");
    assert.is(ok(cli(["task", "show", "X", "--json"], { cwd: clone, agent })).json.status, "claimed");
  }
  assert.ok(has(bare, "refs/handoff/tasks/X"), "the task was pushed back to the remote");
  // Its holder can still finish it.
  ok(cli(["done", "X"], { cwd: alice, agent: "alice" }));
});

test("an archive entry naming a commit nobody has: sync goes on for every other ref, the archive is refused with its reason, the task is kept", async () => {
  const { bare, victim, mallory } = world();
  await storeTasks({ cwd: victim, agent: "lead" }, [{ id: "Y", objective: "another" }]);
  await storeSync({ cwd: victim });
  // An honest change the victim must still receive.
  await storeTasks({ cwd: mallory, agent: "bob" }, [{ id: "Z", objective: "honest" }]);
  await storeSync({ cwd: mallory, agent: "bob" });
  const missing = "1".repeat(40);
  forgeArchive(mallory, "Y", missing, { parent: false, record: "{}\n" });
  gitOut(mallory, "push", "-q", "origin", "refs/handoff/archive");
  gitOut(mallory, "push", "-q", "origin", ":refs/handoff/tasks/Y");

  for (const args of [["sync", "--json"], ["sync", "--json"], ["sync", "--repair", "--json"]]) {
    const s = cli(args, { cwd: victim, agent: "lead" });
    assert.is(s.code, 3, `${args.join(" ")}: ${s.stdout}\n${s.stderr}`);
    const q = s.json.quarantined.find((x: any) => x.ref === "refs/handoff/archive");
    assert.ok(q, JSON.stringify(s.json.quarantined));
    assert.match(q.reason, /names 111111111111 as Y's tip without carrying it as a parent/);
  }
  assert.ok(has(victim, "refs/handoff/tasks/Y"), "Y is kept");
  assert.ok(has(victim, "refs/handoff/tasks/Z"), "the other refs still synced");
  assert.ok(!has(victim, "refs/handoff/archive"), "the forged archive did not enter refs/handoff/");
  assert.ok(has(bare, "refs/handoff/tasks/Y"), "Y was pushed back");
});

test("an archive entry naming a finished record the task never legally reached (a forged done by a non-holder): the task is kept", async () => {
  const { bare, victim, alice, mallory } = world();
  await storeTasks({ cwd: victim, agent: "lead" }, [{ id: "X", objective: "important" }]);
  await storeSync({ cwd: victim });
  await storeSync({ cwd: alice });
  await storeClaim({ cwd: alice, agent: "alice" }, "X");
  await storeSync({ cwd: alice });
  await storeSync({ cwd: victim });
  await storeSync({ cwd: mallory });
  // A "done" by mallory on alice's claim, never pushed to the task's ref: only the archive names it.
  const xTip = gitOut(mallory, "rev-parse", "refs/handoff/tasks/X");
  const rec = readRecordAt(mallory, "refs/handoff/tasks/X");
  const at = new Date().toISOString();
  Object.assign(rec, { status: "done", claim: null, updated_at: at });
  const done = recordCommit(mallory, "task.json", rec, { parent: xTip, author: "mallory", event: { type: "done", task: "X", agent: "mallory", at } });
  forgeArchive(mallory, "X", done, { parent: true, record: JSON.stringify(rec, null, 2) + "\n" });
  gitOut(mallory, "push", "-q", "origin", "refs/handoff/archive");
  gitOut(mallory, "push", "-q", "origin", ":refs/handoff/tasks/X");

  const s = cli(["sync", "--json"], { cwd: victim, agent: "lead" });
  assert.equal(s.json.removed, [], `${s.stdout}\n${s.stderr}`);
  assert.ok(has(victim, "refs/handoff/tasks/X"), "the live task stays");
  assert.is(ok(cli(["task", "show", "X", "--json"], { cwd: victim, agent: "lead" })).json.status, "claimed");
  assert.ok(has(bare, "refs/handoff/tasks/X"), "the task was pushed back to the remote");
});

test.run();
