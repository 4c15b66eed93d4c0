// Receive checks what a lease-set commit removes as well as what it adds: another agent's live
// lease may end only by an operation that ends it (its task's, a forced release naming it, the
// sweep of a silent agent). A set written over another without replaying it (an older build's
// sync did) dropped others' live leases, the next clone granted an exclusive lease on what another
// agent still held, and a clone that saw the lease ref first trusted it whole. And the holder's own
// renewal of its claim inside another operation (a handoff) is not a change of holder.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { eventMessage, readRecordAt, recordCommit, setRef } from "./support/forge.ts";
import { cleanupTemp, cli, gitOut, keepingLeases, succeeded } from "./support/repo.ts";
import { storeClaim, storeSync, storeTasks } from "./support/seed.ts";
import { cloneOf, emptyRemote } from "./support/servers.ts";

test.after(cleanupTemp);

const ok = succeeded;

function project() {
  const bare = emptyRemote();
  return { bare, alice: cloneOf(bare), carol: cloneOf(bare) };
}

const quarantined = (r: ReturnType<typeof cli>) => new Map<string, { kind: string; reason: string }>(r.json.quarantined.map((q: { ref: string; kind: string; reason: string }) => [q.ref, q]));

test("a lease set that drops another agent's live lease is refused on receive, seen before or first; nobody is granted what that agent holds", async () => {
  const { bare, alice, carol } = project();
  // alice's task and claim, and carol's sync of them: written in-process (support/seed.ts).
  await storeTasks({ cwd: alice, agent: "alice", push: true }, [{ id: "parser", objective: "parser", scope: ["src/a.ts"], exclusive: true }]);
  await storeClaim({ cwd: alice, agent: "alice" }, "parser");
  await storeSync({ cwd: carol, agent: "carol" });
  // bob's shared lease written over the remote's set as if alice's never were there: no replay.
  const set = readRecordAt(bare, "refs/handoff/leases", "leases.json");
  const mine = set.leases.find((l: { agent: string }) => l.agent === "alice");
  assert.ok(mine, "alice's lease is on the remote");
  const now = new Date();
  const bobs = { ...mine, pattern: "docs/bob.md", agent: "bob", task: null, exclusive: false, acquired_at: now.toISOString(), expires_at: new Date(now.getTime() + 30 * 60_000).toISOString() };
  const event = { type: "leased", task: "", agent: "bob", at: now.toISOString(), scope: "primary", worktree: null, branch: null, paths: ["docs/bob.md"], exclusive: false, expires_at: bobs.expires_at };
  const parent = gitOut(bare, "rev-parse", "refs/handoff/leases");
  setRef(bare, "refs/handoff/leases", recordCommit(bare, "leases.json", { ...set, leases: [bobs] }, { parent, author: "bob", message: eventMessage(event) }));

  const seenBefore = cli(["sync", "--json"], { cwd: carol, agent: "carol" });
  assert.is(seenBefore.code, 3, "a sync that keeps a ref back says so by its status");
  const q = quarantined(seenBefore).get("refs/handoff/leases");
  assert.ok(q, JSON.stringify(seenBefore.json.quarantined));
  assert.match(q!.reason, /leased by bob removed alice's live lease on "src\/a\.ts"/);
  const taken = cli(["lease", "src/a.ts", "--exclusive"], { cwd: carol, agent: "carol" });
  assert.is(taken.code, 3, "no exclusive lease on what alice holds");
  // A clone that sees the lease ref for the first time checks its last operations too.
  const dave = cloneOf(bare);
  const first = cli(["sync", "--json"], { cwd: dave, agent: "dave" });
  assert.is(first.code, 3, first.stderr);
  assert.match(quarantined(first).get("refs/handoff/leases")?.reason ?? "", /removed alice's live lease/);
  assert.is(cli(["lease", "src/a.ts", "--exclusive"], { cwd: dave, agent: "dave" }).code, 3);
});

test("what may end another agent's live lease still arrives: the creator's cancel, a forced release of a finished task's lease, the holder's handoff renewing its claim", async () => {
  const { alice, carol } = project();
  const at = (minutes: number) => ({ HANDOFF_NOW: new Date(Date.parse("2026-12-06T10:00:00Z") + minutes * 60_000).toISOString() });
  // The tasks, alice's claims and the syncs before the handoff: written in-process (support/seed.ts).
  const by = (cwd: string, agent: string, minutes: number, push = false) => ({ cwd, agent, now: at(minutes).HANDOFF_NOW, ...(push ? { push } : {}) });
  await storeTasks(by(carol, "lead", 0, true), [
    { id: "one", objective: "one", scope: ["src/one.ts"], exclusive: true },
    { id: "two", objective: "two", scope: ["src/two.ts"], exclusive: true },
  ]);
  await storeSync(by(alice, "alice", 0));
  await storeClaim(by(alice, "alice", 1), "one");
  await storeClaim(by(alice, "alice", 1), "two", { overCapacity: true });
  await storeSync(by(carol, "lead", 1));
  // The holder hands over: its claim is renewed in the same commit (a handoff counts as an update).
  ok(cli(["handoff", "two", "--note", "halfway"], { cwd: alice, agent: "alice", env: at(10) }));
  ok(cli(["sync"], { cwd: alice, agent: "alice", env: at(10) }));
  const handed = cli(["sync", "--json"], { cwd: carol, agent: "lead", env: at(10) });
  assert.equal(handed.json.quarantined, [], JSON.stringify(handed.json.quarantined));
  assert.is(cli(["task", "show", "two", "--json"], { cwd: carol, agent: "lead", env: at(10) }).json.handoffs.length, 1);
  // The creator cancels a task alice holds: its lease ends with it.
  ok(cli(["cancel", "one", "--reason", "not needed"], { cwd: carol, agent: "lead", env: at(11) }));
  ok(cli(["sync"], { cwd: carol, agent: "lead", env: at(11) }));
  const cancelled = cli(["sync", "--json"], { cwd: alice, agent: "alice", env: at(11) });
  assert.equal(cancelled.json.quarantined, [], JSON.stringify(cancelled.json.quarantined));
  const leases = cli(["leases", "--json"], { cwd: alice, agent: "alice", env: at(11) }).json as { pattern: string }[];
  assert.equal(leases.map((l) => l.pattern), ["src/two.ts"]);
  // A lease left serving a finished task (as an older build's merge leaves one), force-released by another agent.
  keepingLeases(alice, () => ok(cli(["done", "two"], { cwd: alice, agent: "alice", env: at(12) })));
  ok(cli(["sync"], { cwd: alice, agent: "alice", env: at(12) }));
  ok(cli(["sync"], { cwd: carol, agent: "lead", env: at(12) }));
  ok(cli(["unlease", "src/two.ts", "--reclaim", "--reason", "its task is done"], { cwd: carol, agent: "lead", env: at(13) }));
  ok(cli(["sync"], { cwd: carol, agent: "lead", env: at(13) }));
  const reclaimed = cli(["sync", "--json"], { cwd: alice, agent: "alice", env: at(13) });
  assert.equal(reclaimed.json.quarantined, [], JSON.stringify(reclaimed.json.quarantined));
  assert.equal(cli(["leases", "--json"], { cwd: alice, agent: "alice", env: at(13) }).json, []);
});

test.run();
