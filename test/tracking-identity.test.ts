// A clone pointed at another place keeps its coordination state. The tracking refs say what the
// remote had when last asked, and a ref it had then but lacks now reads as one it deleted: a clone
// switched to a branch prefix (`git handoff remote origin --ref-prefix ...`) or to a new host (`git
// remote set-url`) deleted every task, claim and lease at its next sync ("archived elsewhere").
// Now the place the tracking refs were made for is kept beside them (src/sync/tracking-identity.ts),
// and a live task deleted on the remote by hand is put back rather than lost (src/sync/integrate.ts).
import { existsSync, rmSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, handoffRefs, tempDir } from "./support/repo.ts";
import { twoClones } from "./support/servers.ts";
import { storeClaim, storeDone, storeSync, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

const placeFile = (clone: string) => `${clone}/.git/handoff/tracking-origin`;
const remoteRefs = (bare: string, prefix: string) => gitOut(bare, "for-each-ref", "--format=%(refname)", prefix).split("\n").filter(Boolean);

/** Two clones of one bare remote, a task claimed by alice in `a`, both synced (through the store: seed.ts). */
async function team() {
  const t = twoClones();
  await storeTasks({ cwd: t.a, agent: "alice" }, ["live", "open"].map((id) => ({ id, objective: `the ${id} one`, scope: [`src/${id}/**`] })));
  await storeClaim({ cwd: t.a, agent: "alice" }, "live");
  for (const c of [t.a, t.b]) await storeSync({ cwd: c, agent: "alice" });
  assert.ok(existsSync(placeFile(t.a)), "a sync notes the place its tracking refs are of");
  return t;
}

function syncReport(cwd: string) {
  const r = cli(["sync", "--json"], { cwd, agent: "alice" });
  // Exit 3 (quarantined) when the sync kept refs of the remote back, which the report lists.
  assert.is(r.code, r.json?.quarantined?.length ? 3 : 0, r.stderr);
  return r.json;
}

const stateOf = (cwd: string) => handoffRefs(cwd).split("\n").filter((l) => /^refs\/handoff\/(tasks|leases)/.test(l));

test("a switch to a branch prefix keeps every task and lease, and publishes them under the prefix", async () => {
  const { a, b, bare } = await team();
  const before = stateOf(a);
  assert.is(before.length, 3, before.join("\n"));
  // As an older git-handoff left it: no note of the place (the command itself must forget the old one).
  rmSync(placeFile(a));
  assert.is(cli(["remote", "origin", "--ref-prefix", "refs/heads/handoff/"], { cwd: a }).code, 0);
  const r = syncReport(a);
  assert.equal(r.removed, [], "nothing taken for deleted on the remote");
  assert.equal(stateOf(a), before, "the clone's state is as it was");
  assert.is(cli(["task", "show", "live", "--json"], { cwd: a }).json.claim.agent, "alice");
  assert.ok(remoteRefs(bare, "refs/heads/handoff/tasks/").includes("refs/heads/handoff/tasks/live"), "published under the prefix");
  // The other clone follows: switched too, it takes the state from the new place and loses nothing.
  assert.is(cli(["remote", "origin", "--ref-prefix", "refs/heads/handoff/"], { cwd: b }).code, 0);
  assert.equal(syncReport(b).removed, []);
  assert.equal(stateOf(b), before);
  // And back again.
  assert.is(cli(["remote", "origin", "--ref-prefix", "refs/handoff/"], { cwd: a }).code, 0);
  assert.equal(syncReport(a).removed, []);
  assert.equal(stateOf(a), before);
});

test("a remote moved to another host by git remote set-url: nothing deleted, the state pushed there", async () => {
  const { a, b } = await team();
  const before = stateOf(a);
  const moved = `${tempDir("handoff-moved-")}/new.git`;
  gitOut(a, "init", "-q", "--bare", moved);
  gitOut(a, "push", "-q", moved, "main");
  gitOut(a, "remote", "set-url", "origin", moved);
  const r = syncReport(a);
  assert.equal(r.removed, []);
  assert.equal(stateOf(a), before);
  assert.is(remoteRefs(moved, "refs/handoff/tasks/").length, 2, "both tasks on the new host");
  assert.is(cli(["claim", "live", "--json"], { cwd: b, agent: "bob" }).code, 3, "the old host still has alice's claim");
  gitOut(b, "remote", "set-url", "origin", moved);
  assert.equal(syncReport(b).removed, []);
  assert.equal(stateOf(b), before);
});

test("the same place: a finished task deleted on the remote goes here too, with or without the note (older clones); a live one, or the lease set, is put back", async () => {
  const { a, b, bare } = await team();
  await storeTasks({ cwd: a, agent: "alice" }, [{ id: "fin", objective: "finished" }]);
  await storeDone({ cwd: a, agent: "alice" }, "fin");
  for (const c of [a, b]) await storeSync({ cwd: c, agent: "alice" });
  rmSync(placeFile(b));
  gitOut(bare, "update-ref", "-d", "refs/handoff/tasks/fin");
  assert.equal(syncReport(b).removed, ["refs/handoff/tasks/fin"], "tracking refs from before the note are kept");
  assert.ok(existsSync(placeFile(b)), "and the note written");
  // Compaction archives what it removes, and only finished tasks: a live task gone by hand is not
  // lost in every clone, it is pushed back.
  gitOut(bare, "update-ref", "-d", "refs/handoff/tasks/live");
  const r = syncReport(a);
  assert.equal(r.removed, ["refs/handoff/tasks/fin"]);
  assert.ok(r.pushed.includes("refs/handoff/tasks/live"), JSON.stringify(r.pushed));
  assert.ok(remoteRefs(bare, "refs/handoff/tasks/").includes("refs/handoff/tasks/live"));
  assert.is(cli(["task", "show", "live", "--json"], { cwd: b }).json.claim.agent, "alice");
  // No operation deletes the lease set: gone from the remote, it was lost there, and comes back.
  gitOut(bare, "update-ref", "-d", "refs/handoff/leases");
  assert.ok(syncReport(b).pushed.includes("refs/handoff/leases"));
  assert.match(JSON.stringify(cli(["check", "src/live/a.ts", "--json"], { cwd: b, agent: "bob" }).json.paths[0].holders), /alice/, "alice's lease on the claimed task's scope stands");
  assert.ok(remoteRefs(bare, "refs/handoff/leases").length === 1);
});

test("a remote moved after a refusal: the old place's quarantine is not repaired on the new one", async () => {
  const { a, bare } = await team();
  // The old place holds a ref that is not a task record: refused on receive, held for --repair.
  const empty = gitOut(bare, "hash-object", "-t", "tree", "-w", "--stdin");
  const forged = gitOut(bare, "commit-tree", empty, "-m", "not a task");
  gitOut(bare, "update-ref", "refs/handoff/tasks/open", forged);
  assert.equal(syncReport(a).quarantined.map((q: any) => q.ref), ["refs/handoff/tasks/open"]);
  const moved = `${tempDir("handoff-moved-")}/new.git`;
  gitOut(a, "init", "-q", "--bare", moved);
  gitOut(a, "remote", "set-url", "origin", moved);
  const r = cli(["sync", "--repair", "--json"], { cwd: a, agent: "alice" });
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.json.repaired, [], "nothing of the old place is pushed over the new one");
  assert.equal(r.json.quarantined, []);
  assert.is(gitOut(moved, "rev-parse", "refs/handoff/tasks/open"), gitOut(a, "rev-parse", "refs/handoff/tasks/open"), "the new place has this clone's task");
});

test.run();
