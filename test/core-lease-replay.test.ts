// The lease set's replay, pure (src/core/lease-replay.ts): a local write laid on what another clone
// pushed keeps that clone's leases, adds its own only where nothing clashes, and removes another
// agent's lease only as it was then (or once it has run out).
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Lease, LeaseSet } from "../src/core/lease.ts";
import { replayLeaseWrite } from "../src/core/lease-replay.ts";

const NOW = new Date("2026-12-05T12:00:00.000Z");
function lease(agent: string, pattern: string, o: { exclusive?: boolean; expires?: string } = {}): Lease {
  return { pattern, agent, task: null, exclusive: o.exclusive ?? false, acquired_at: "2026-12-05T11:00:00.000Z", expires_at: o.expires ?? "2026-12-05T13:00:00.000Z", ttl_ms: 7_200_000, reason: null, worktree: null, branch: null, scope: "primary" } as Lease;
}
const set = (...leases: Lease[]): LeaseSet => ({ leases });
const names = (s: LeaseSet) => s.leases.map((l) => `${l.pattern} ${l.agent}${l.exclusive ? " x" : ""} ${l.expires_at.slice(11, 16)}`).sort();

test("added leases join what the other clone pushed; a clash with another agent's live lease is refused", () => {
  const base = set(lease("alice", "README.md"));
  const onto = set(lease("alice", "README.md"), lease("bob", "src/a.ts", { exclusive: true }));
  const written = set(lease("alice", "README.md"), lease("alice", "docs/**"), lease("alice", "src/**", { exclusive: true }));
  const r = replayLeaseWrite(onto, base, written, "alice", NOW);
  assert.equal(names(r.record), ["README.md alice 13:00", "docs/** alice 13:00", "src/a.ts bob x 13:00"]);
  assert.equal(r.refused.map((x) => `${x.lease.pattern} vs ${x.clash.agent} ${x.clash.pattern}`), ["src/** vs bob src/a.ts"]);
});

test("a renewal replaces its own lease; its removal of its own lease holds whatever became of it", () => {
  const base = set(lease("alice", "a.ts"), lease("alice", "b.ts"));
  const onto = set(lease("alice", "a.ts"), lease("alice", "b.ts", { expires: "2026-12-05T14:00:00.000Z" }), lease("carol", "c.ts"));
  const written = set(lease("alice", "a.ts", { expires: "2026-12-05T15:00:00.000Z" }));
  const r = replayLeaseWrite(onto, base, written, "alice", NOW);
  assert.equal(names(r.record), ["a.ts alice 15:00", "c.ts carol 13:00"]);
  assert.equal(r.refused, []);
});

test("a sweep of another agent's lease takes it only as it was, or once it has run out", () => {
  const expired = lease("bob", "x.ts", { exclusive: true, expires: "2026-12-05T11:30:00.000Z" });
  const renewed = lease("bob", "x.ts", { exclusive: true, expires: "2026-12-05T16:00:00.000Z" });
  const gone = lease("dave", "y.ts", { expires: "2026-12-05T11:30:00.000Z" });
  const base = set(expired, gone);
  // Bob renewed x.ts on his clone meanwhile; dave's y.ts is as the sweep saw it.
  const r = replayLeaseWrite(set(renewed, gone), base, set(), "alice", NOW);
  assert.equal(names(r.record), ["x.ts bob x 16:00"]);
  // Bob's lease changed on the remote but has run out there too: swept.
  const ranOut = lease("bob", "x.ts", { exclusive: true, expires: "2026-12-05T11:45:00.000Z" });
  assert.equal(names(replayLeaseWrite(set(ranOut), set(expired), set(), "alice", NOW).record), []);
});

test("with a takeover grace, another agent's lease expired by this clock stands against an added lease and a sweep until the grace ends", () => {
  const GRACE = 60_000;
  // Bob's lease ran out at 11:59:30, 30 s before NOW: inside a 60 s grace, not past it.
  const bob = lease("bob", "x.ts", { exclusive: true, expires: "2026-12-05T11:59:30.000Z" });
  const added = replayLeaseWrite(set(bob), set(), set(lease("alice", "x.ts")), "alice", NOW, new Set(), GRACE);
  assert.equal(names(added.record), ["x.ts bob x 11:59"]);
  assert.equal(added.refused.map((x) => `${x.lease.agent} vs ${x.clash.agent}`), ["alice vs bob"]);
  assert.equal(names(replayLeaseWrite(set(bob), set(), set(lease("alice", "x.ts")), "alice", NOW).record), ["x.ts alice 13:00", "x.ts bob x 11:59"], "no grace: added");
  // Alice's write swept bob's older lease; bob renewed it to 11:59:30 meanwhile.
  const older = lease("bob", "x.ts", { exclusive: true, expires: "2026-12-05T11:00:00.000Z" });
  assert.equal(names(replayLeaseWrite(set(bob), set(older), set(), "alice", NOW, new Set(), GRACE).record), ["x.ts bob x 11:59"]);
  assert.equal(names(replayLeaseWrite(set(bob), set(older), set(), "alice", new Date(NOW.getTime() + 31_000), new Set(), GRACE).record), [], "past the grace: swept");
  // The grace is for other agents' clocks: alice's own lease, expired, is hers to replace.
  const mine = lease("alice", "x.ts", { exclusive: true, expires: "2026-12-05T11:59:30.000Z" });
  assert.equal(names(replayLeaseWrite(set(mine), set(), set(lease("alice", "x.ts")), "alice", NOW, new Set(), GRACE).record), ["x.ts alice 13:00"]);
});

test("a task's lease follows its task: for a finished one it is not added again, and its removal holds", () => {
  const forTask = (agent: string, pattern: string, task: string, expires?: string) => ({ ...lease(agent, pattern, { exclusive: true, ...(expires ? { expires } : {}) }), task });
  const held = forTask("alice", "src/a/**", "T");
  const renewed = forTask("alice", "src/a/**", "T", "2026-12-05T15:00:00.000Z");
  const other = forTask("carol", "src/c/**", "U");
  // alice's renewal of T, laid on a set where T's cancel had already removed its lease.
  assert.equal(names(replayLeaseWrite(set(other), set(held, other), set(renewed, other), "alice", NOW, new Set(["T"])).record), ["src/c/** carol x 13:00"]);
  assert.equal(names(replayLeaseWrite(set(other), set(held, other), set(renewed, other), "alice", NOW).record), ["src/a/** alice x 15:00", "src/c/** carol x 13:00"]);
  // The creator's cancel of T (it removed alice's lease), laid on alice's renewal of it.
  assert.equal(names(replayLeaseWrite(set(renewed, other), set(held, other), set(other), "lead", NOW, new Set(["T"])).record), ["src/c/** carol x 13:00"]);
  assert.equal(names(replayLeaseWrite(set(renewed, other), set(held, other), set(other), "lead", NOW).record), ["src/a/** alice x 15:00", "src/c/** carol x 13:00"]);
});

test.run();
