// `sync --repair` puts this clone's value of a ref refused on receive in place of the remote's. A
// refusal is not proof of forgery (a clock a little off, an older or newer build), so a repair that
// would lower a fence, remove a live claim or lease, or delete a ref this clone merely lacks is
// refused for that ref (unsafe_repair, exit 3, nothing pushed for it) unless --force. Real clones of
// a bare remote, the real CLI.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { blob, recordCommit, readRecordAt, setRef } from "./support/forge.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { storeClaim, storeLease, storeSync, storeTasks } from "./support/seed.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";

test.after(cleanupTemp);

const ok = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};

const tip = (repo: string, ref: string) => {
  try {
    return gitOut(repo, "rev-parse", "--verify", "--quiet", ref);
  } catch {
    return null;
  }
};

/**
 * The audit's chain (finding 2): carol's clock is 10 minutes behind the task's last write, so her
 * legal claim (with its scope lease) is taken by the remote but refused on receive by the clone that
 * had seen the task. That clone has no lease set of its own.
 */
async function refusedClaim() {
  const bare = serveRoot().bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const victim = cloneOf(bare);
  const carol = cloneOf(bare);
  // The task, the syncs and carol's claim in-process (support/seed.ts); the victim's sync that refuses it is a process.
  await storeTasks({ cwd: victim, agent: "victim" }, [{ id: "t", objective: "the task", scope: ["src/a.ts"] }]);
  await storeSync({ cwd: victim, agent: "victim" });
  await storeSync({ cwd: carol, agent: "carol" });
  await storeClaim({ cwd: carol, agent: "carol", now: new Date(Date.now() - 10 * 60_000).toISOString() }, "t");
  const s = cli(["sync", "--json"], { cwd: victim, agent: "victim" });
  const refused = new Map<string, any>(s.json.quarantined.map((q: any) => [q.ref, q]));
  assert.match(refused.get("refs/handoff/tasks/t")?.reason ?? "", /before its parent's/, JSON.stringify(s.json.quarantined));
  assert.ok(refused.get("refs/handoff/leases"), "the lease set of the same operation is held back with it");
  assert.is(tip(victim, "refs/handoff/leases"), null, "this clone has no lease set of its own");
  return { bare, victim, carol, remoteTask: tip(bare, "refs/handoff/tasks/t")!, remoteLeases: tip(bare, "refs/handoff/leases")! };
}

test("a repair that would lower a fence or delete a ref this clone lacks is refused: nothing pushed, and a fresh clone cannot grant the task again", async () => {
  const { bare, victim, remoteTask, remoteLeases } = await refusedClaim();
  const r = cli(["sync", "--repair", "--json"], { cwd: victim, agent: "victim" });
  assert.is(r.code, 3, r.stdout + r.stderr);
  const byRef = new Map<string, any>(r.json.repaired.map((p: any) => [p.ref, p]));
  const task = byRef.get("refs/handoff/tasks/t");
  assert.is(task.ok, false);
  assert.is(task.code, "unsafe_repair");
  assert.match(task.refused, /would lower t's fence from 1 to 0/);
  const leases = byRef.get("refs/handoff/leases");
  assert.is(leases.code, "unsafe_repair");
  assert.match(leases.refused, /no value of its own/);
  assert.is(tip(bare, "refs/handoff/tasks/t"), remoteTask, "carol's claim stays on the remote");
  assert.is(tip(bare, "refs/handoff/leases"), remoteLeases, "the remote's lease set is not deleted");

  // The text names each ref and why, one line each.
  const t = cli(["sync", "--repair"], { cwd: victim, agent: "victim" });
  assert.is(t.code, 3);
  assert.match(t.stdout, /^not repaired \[unsafe_repair\]: refs\/handoff\/tasks\/t on origin \(was [0-9a-f]{12}, refused: event time .*\): it would lower t's fence from 1 to 0, .*; nothing pushed for it \(.*git handoff sync --repair --force overwrites it\)$/m);
  assert.match(t.stdout, /^not repaired \[unsafe_repair\]: refs\/handoff\/leases on origin .*: this clone has no value of its own, .*nothing pushed for it/m);
  assert.not.match(t.stdout, /deleted/);

  // No double grant: a fresh clone judges the task's whole history and refuses carol's claim as
  // this clone did, so it has no task t to grant (it was never taken in), and says why: the
  // remote's copy was refused, not "no task t".
  const fresh = cloneOf(bare);
  const f = cli(["sync", "--json"], { cwd: fresh, agent: "dave" });
  assert.is(f.code, 3, f.stdout + f.stderr);
  assert.match(f.json.quarantined.find((q: any) => q.ref === "refs/handoff/tasks/t")?.reason ?? "", /before its parent's/);
  const c = cli(["claim", "t", "--json"], { cwd: fresh, agent: "dave" });
  assert.is(c.code, 3, c.stdout + c.stderr);
  assert.is(c.json.error.code, "quarantined");
  assert.match(c.json.error.message, /^refs\/handoff\/tasks\/t on origin failed validation \(.*before its parent's/);
  assert.is(gitOut(fresh, "for-each-ref", "refs/handoff/tasks/"), "", "nothing of t taken in");
});

test("each hint names the command that works: --repair --force where --repair refuses (and deletes where this clone has none), --repair where it goes ahead; a --repair run does not repeat the plain hint", async () => {
  const { bare, victim } = await refusedClaim();
  const s = cli(["sync"], { cwd: victim, agent: "victim" });
  assert.is(s.code, 3, s.stdout + s.stderr);
  assert.match(s.stdout, /^refused on receive: refs\/handoff\/tasks\/t: .*; git handoff sync --repair refuses it: it would lower t's fence from 1 to 0, .*; after checking the remote's value, git handoff sync --repair --force overwrites it\)$/m);
  assert.match(s.stdout, /^refused on receive: refs\/handoff\/leases: .*; git handoff sync --repair refuses it: this clone has no value of its own, .*; after checking the remote's value, git handoff sync --repair --force deletes it\)$/m);
  assert.not.match(s.stdout, /--repair overwrites it/);
  // --json carries the same advice, from the same function, for a script or an agent to pass on.
  for (const args of [["sync", "--json"], ["status", "--json"]]) {
    const j = cli(args, { cwd: victim, agent: "victim" }).json;
    const repair = new Map(j.quarantined.map((q: { ref: string; repair: unknown }) => [q.ref, q.repair]));
    const task = repair.get("refs/handoff/tasks/t") as { command: string; hint: string; deletes: boolean };
    assert.is(task.command, "git handoff sync --repair --force", args.join(" "));
    assert.is(task.deletes, false);
    assert.ok(s.stdout.includes(task.hint), `${args.join(" ")}: the text's words: ${task.hint}`);
    const leases = repair.get("refs/handoff/leases") as { command: string; deletes: boolean; hazard: string };
    assert.equal([leases.command, leases.deletes], ["git handoff sync --repair --force", true]);
    assert.match(leases.hazard, /^this clone has no value of its own/);
  }
  const status = cli(["status"], { cwd: victim, agent: "victim" });
  assert.match(status.stdout, /^refused on receive: refs\/handoff\/leases: .*git handoff sync --repair --force deletes it\)$/m, "status says the same");
  const doctor = cli(["doctor", "--json"], { cwd: victim, agent: "victim" }).json;
  assert.match(doctor.checks.find((c: any) => c.name === "received").fix, /git handoff sync --repair --force overwrites or deletes them$/);

  const r = cli(["sync", "--repair"], { cwd: victim, agent: "victim" });
  assert.is(r.code, 3, r.stdout + r.stderr);
  assert.match(r.stdout, /^not repaired \[unsafe_repair\]: refs\/handoff\/leases on origin .*\(after checking the remote's value, git handoff sync --repair --force deletes it\)$/m);
  assert.match(r.stdout, /^refused on receive: refs\/handoff\/tasks\/t: .*\(kept under refs\/handoff-remotes\/origin\/; not repaired: see above\)$/m);
  assert.not.match(r.stdout, /--repair overwrites it/, "the plain hint is not repeated");

  // A remote value nothing can read (a blob in place of the task): --repair goes ahead, and the hint says so.
  setRef(bare, "refs/handoff/tasks/t", blob(bare, "not a commit"));
  const again = cli(["sync"], { cwd: victim, agent: "victim" });
  assert.match(again.stdout, /^refused on receive: refs\/handoff\/tasks\/t: [0-9a-f]{12} is a blob, not a commit \(kept under refs\/handoff-remotes\/origin\/; git handoff sync --repair overwrites it\)$/m);
  assert.match(cli(["sync", "--repair"], { cwd: victim, agent: "victim" }).stdout, /^repaired: refs\/handoff\/tasks\/t on origin .*-> this clone's [0-9a-f]{12}$/m, "as the hint said, --repair alone does it");
});

test("a repair that would remove another agent's live claim or live lease is refused, though the fence would not go down", async () => {
  const bare = serveRoot().bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const victim = cloneOf(bare);
  await storeTasks({ cwd: victim, agent: "victim" }, [{ id: "u", objective: "the task" }]);
  await storeLease({ cwd: victim, agent: "victim" }, ["docs/v.md"]);
  await storeSync({ cwd: victim, agent: "victim" });
  // Histories that do not descend from what this clone validated (refused as rewritten), holding
  // mallory's live claim at this clone's own fence, and the victim's lease set plus mallory's lease.
  const at = new Date().toISOString();
  const until = new Date(Date.now() + 30 * 60_000).toISOString();
  const task = readRecordAt(bare, "refs/handoff/tasks/u");
  const claimed = { ...task, status: "claimed", updated_at: at, claim: { agent: "mallory", claimed_at: at, expires_at: until, fence: task.fence, ttl_ms: 30 * 60_000, worktree: null, branch: null, scope: "primary" } };
  const forgedTask = recordCommit(bare, "task.json", claimed, { author: "mallory" });
  setRef(bare, "refs/handoff/tasks/u", forgedTask);
  const set = readRecordAt(bare, "refs/handoff/leases", "leases.json");
  set.leases.push({ pattern: "src/m.ts", agent: "mallory", task: null, exclusive: true, acquired_at: at, expires_at: until, ttl_ms: 30 * 60_000, reason: null, worktree: null, branch: null, scope: "primary" });
  const forgedLeases = recordCommit(bare, "leases.json", set, { author: "mallory" });
  setRef(bare, "refs/handoff/leases", forgedLeases);
  const s = cli(["sync", "--json"], { cwd: victim, agent: "victim" });
  assert.equal(s.json.quarantined.map((q: any) => q.ref).sort(), ["refs/handoff/leases", "refs/handoff/tasks/u"]);

  const r = cli(["sync", "--repair", "--json"], { cwd: victim, agent: "victim" });
  assert.is(r.code, 3, r.stdout + r.stderr);
  const byRef = new Map<string, any>(r.json.repaired.map((p: any) => [p.ref, p]));
  assert.match(byRef.get("refs/handoff/tasks/u").refused, /would remove mallory's live claim on u \(fence 0, until /);
  assert.match(byRef.get("refs/handoff/leases").refused, /would remove 1 live lease\(s\) this clone's set lacks: mallory's exclusive lease on src\/m\.ts/);
  assert.is(tip(bare, "refs/handoff/tasks/u"), forgedTask);
  assert.is(tip(bare, "refs/handoff/leases"), forgedLeases);
});

test("a repair that would put a finished task back to an earlier state is refused, though the fence would not go down and no claim is live there", async () => {
  const bare = serveRoot().bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const victim = cloneOf(bare);
  await storeTasks({ cwd: victim, agent: "victim" }, [{ id: "w", objective: "the task" }]);
  await storeClaim({ cwd: victim, agent: "victim" }, "w");
  await storeSync({ cwd: victim, agent: "victim" });
  // The remote's history, not descending from what this clone validated, has w done at its fence.
  const task = readRecordAt(bare, "refs/handoff/tasks/w");
  const done = { ...task, status: "done", claim: null, updated_at: new Date().toISOString() };
  const forged = recordCommit(bare, "task.json", done, { author: "mallory" });
  setRef(bare, "refs/handoff/tasks/w", forged);
  const s = cli(["sync", "--json"], { cwd: victim, agent: "victim" });
  assert.equal(s.json.quarantined.map((q: any) => q.ref), ["refs/handoff/tasks/w"]);

  const r = cli(["sync", "--repair", "--json"], { cwd: victim, agent: "victim" });
  assert.is(r.code, 3, r.stdout + r.stderr);
  const [p] = r.json.repaired;
  assert.is(p.code, "unsafe_repair");
  assert.match(p.refused, /^it would undo w's done \(of .*\): this clone's value says claimed$/);
  assert.is(tip(bare, "refs/handoff/tasks/w"), forged, "the remote's done stays");
});

test("--force overwrites them after all, saying what it overrode; a clone that took the overwritten claim then refuses to vouch for it", async () => {
  const { bare, victim, carol } = await refusedClaim();
  const usage = cli(["sync", "--force"], { cwd: victim, agent: "victim" });
  assert.is(usage.code, 2, "--force goes with --repair");
  const r = ok(cli(["sync", "--repair", "--force"], { cwd: victim, agent: "victim" }));
  assert.match(r.stdout, /^repaired: refs\/handoff\/tasks\/t on origin .*-> this clone's [0-9a-f]{12} \(--force: it would lower t's fence from 1 to 0/m);
  assert.match(r.stdout, /^repaired: refs\/handoff\/leases on origin .*-> deleted \(--force: this clone has no value of its own/m);
  assert.is(tip(bare, "refs/handoff/tasks/t"), tip(victim, "refs/handoff/tasks/t"));
  assert.is(tip(bare, "refs/handoff/leases"), null);

  // Carol's clone refuses the overwrite (it does not descend from her claim). Her local copy still
  // says she holds t: fence-check must not pass it off as the remote's answer.
  const f = cli(["fence-check", "t", "--json"], { cwd: carol, agent: "carol" });
  assert.is(f.code, 3, f.stdout + f.stderr);
  assert.is(f.json.error.code, "quarantined");
  assert.match(f.json.error.message, /^cannot check t against origin: its ref there was refused on receive \(rewritten history/);
  const text = cli(["fence-check", "t"], { cwd: carol, agent: "carol" });
  assert.is(text.code, 3);
  assert.not.match(text.stdout + text.stderr, /checked against remote state/);
});

test.run();
