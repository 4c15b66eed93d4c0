// A sync replays this clone's local writes on what the remote holds; a write made before another
// agent's claim or lease arrived here is judged there with the takeover grace every write honours
// (docs/sync.md "Clock skew cannot steal a lease"): bob's one-minute lease or claim from T, pushed
// from clone b; alice in clone a, not yet synced, writes locally (a shared lease, an --offline
// claim, a lease write that sweeps bob's old lease) and syncs at INSIDE (30 s past bob's expiry by
// her clock, inside the 60 s grace): refused as held by bob, a conflict naming him, the remote's
// ref unchanged; at PAST (past the grace) the same replay goes through.
import { renameSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { at, INSIDE, PAST, T } from "./support/grace-clock.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { storeClaim, storeLease, storeSync, storeTasks, type Actor } from "./support/seed.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";

test.after(cleanupTemp);

/** A bare remote by path (renamed away to take it offline) and two clones of it. */
function project(name: string): { bare: string; a: string; b: string } {
  const bare = serveRoot().bare(name);
  gitOut(tempRepo(), "push", "-q", bare, "main");
  return { bare, a: cloneOf(bare), b: cloneOf(bare) };
}

const ok = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};
const tip = (bare: string, ref: string) => gitOut(bare, "rev-parse", "--verify", "-q", ref);
/** `pattern agent` of each lease on the remote, sorted. */
const remoteLeases = (bare: string) =>
  (JSON.parse(gitOut(bare, "show", "refs/handoff/leases:leases.json")).leases as { pattern: string; agent: string; exclusive: boolean }[])
    .map((l) => `${l.pattern} ${l.agent}${l.exclusive ? " exclusive" : ""}`)
    .sort();
/** `agent` in `cwd` at `ms` (--push: `push`): the setup's writes and syncs, in-process (support/seed.ts). */
const by = (cwd: string, agent: string, ms: number, push = false): Actor => ({ cwd, agent, now: new Date(ms).toISOString(), ...(push ? { push } : {}) });
const label = (ms: number) => (ms === INSIDE ? "inside the grace" : "past the grace");

for (const when of [INSIDE, PAST]) {
  test(`a shared lease written here before bob's exclusive lease arrived, synced ${label(when)}`, async () => {
    const { bare, a, b } = project("lease");
    await storeLease(by(b, "bob", T), ["src/x.ts"], { exclusive: true, ttl: "1m" }); // through the remote
    const before = tip(bare, "refs/handoff/leases");
    await storeLease(by(a, "alice", when), ["src/x.ts"]); // local: bob's lease unseen here
    const s = ok(cli(["sync", "--json"], { cwd: a, agent: "alice", env: at(when) })).json;
    if (when === INSIDE) {
      assert.is(s.conflicts.length, 1, JSON.stringify(s.conflicts));
      const c = s.conflicts[0];
      assert.is(c.agent, "alice");
      assert.is(c.holder, "bob");
      assert.is(c.code, "held_by_other");
      assert.match(c.message, /^lease on src\/x\.ts by alice at 2026-11-30T09:01:30\.000Z no longer applies: it overlaps bob's live exclusive lease on src\/x\.ts \(it expired at 2026-11-30T09:01:00\.000Z by this clock, but stands 60s past its expiry, the takeover grace for clock skew\)$/);
      assert.is(tip(bare, "refs/handoff/leases"), before, "nothing of alice's reached the remote");
      assert.equal(remoteLeases(bare), ["src/x.ts bob exclusive"]);
      assert.not.match(ok(cli(["leases"], { cwd: a, env: at(when) })).stdout, /alice/, "nor is it kept here");
    } else {
      assert.equal(s.conflicts, []);
      assert.equal(remoteLeases(bare), ["src/x.ts alice", "src/x.ts bob exclusive"]);
    }
  });

  test(`an --offline claim made here before bob's claim arrived, synced ${label(when)}`, async () => {
    const { bare, a, b } = project("claim");
    // Both clones see the task ten minutes before T: too long before alice's sync to estimate her clock from.
    await storeTasks(by(b, "lead", T - 600_000, true), [{ id: "x", objective: "ship it" }]);
    await storeSync(by(a, "alice", T - 600_000));
    await storeClaim(by(b, "bob", T), "x", { ttl: "1m" });
    const before = tip(bare, "refs/handoff/tasks/x");
    renameSync(bare, `${bare}.away`);
    ok(cli(["claim", "x", "--offline"], { cwd: a, agent: "alice", env: at(when) })); // tentative: the task is open here
    renameSync(`${bare}.away`, bare);
    const s = ok(cli(["sync", "--json"], { cwd: a, agent: "alice", env: at(when) })).json;
    const task = () => JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/x:task.json"));
    if (when === INSIDE) {
      assert.equal(s.refused.map((t: any) => t.event.task), ["x"]);
      assert.equal(s.confirmed, []);
      assert.is(s.conflicts.length, 1, JSON.stringify(s.conflicts));
      const c = s.conflicts[0];
      assert.is(c.agent, "alice");
      assert.is(c.holder, "bob");
      assert.is(c.code, "held_by_other");
      assert.match(c.message, /^claim of x by alice at \S+ no longer applies: task x is held by bob: its lease expired at 2026-11-30T09:01:00\.000Z, 30s ago, but a takeover waits 60s past the expiry for clock skew/);
      assert.is(tip(bare, "refs/handoff/tasks/x"), before, "the remote's task is bob's as he left it");
      assert.is(ok(cli(["task", "show", "x", "--json"], { cwd: a, env: at(when) })).json.claim.agent, "bob");
    } else {
      assert.equal(s.conflicts, []);
      assert.equal(s.confirmed.map((t: any) => t.event.task), ["x"]);
      assert.is(task().claim.agent, "alice");
    }
  });

  test(`a lease write here that swept bob's old lease, synced ${label(when)} after bob renewed it`, async () => {
    const { bare, a, b } = project("sweep");
    await storeLease(by(b, "bob", T - 660_000), ["src/y.ts"], { exclusive: true, ttl: "1m" });
    await storeSync(by(a, "alice", T - 600_000)); // bob's first lease, expired by then
    await storeLease(by(b, "bob", T), ["src/y.ts"], { exclusive: true, ttl: "1m" }); // renewed, through the remote
    // Alice's next lease write sweeps bob's first lease, long expired by her clock: the renewal is unseen here.
    ok(cli(["lease", "src/z.ts"], { cwd: a, agent: "alice", env: at(when) }));
    assert.not.match(gitOut(a, "show", "refs/handoff/leases:leases.json"), /src\/y\.ts/);
    const s = ok(cli(["sync", "--json"], { cwd: a, agent: "alice", env: at(when) })).json;
    assert.equal(s.conflicts, []);
    // The renewal expired at T + 1m: inside the grace it stands, past it the sweep takes it.
    assert.equal(remoteLeases(bare), when === INSIDE ? ["src/y.ts bob exclusive", "src/z.ts alice"] : ["src/z.ts alice"]);
  });
}

test.run();
