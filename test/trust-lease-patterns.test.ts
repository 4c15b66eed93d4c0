// A lease pattern's cost to compare is bounded, for what this clone writes and for what it
// receives. Two leases of twelve `{a,b}` groups each (4,096 paths apiece) took a victim's sync 155
// s to judge, and seventeen never ended: the overlap check compared every pair of expansions.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { eventMessage, readRecordAt, recordCommit, setRef } from "./support/forge.ts";
import { cleanupTemp, cli, gitOut, handoffRefs, succeeded } from "./support/repo.ts";
import { storeLease, storeSync } from "./support/seed.ts";
import { cloneOf, emptyRemote } from "./support/servers.ts";

test.after(cleanupTemp);

const ok = succeeded;
const groups = (n: number, alternatives: string) => alternatives.repeat(n);

/** Each agent's lease written by hand on the remote as one more commit by that agent (forge.ts). */
function forgeLeases(bare: string, agent: string, change: (l: { pattern: string; exclusive: boolean }) => void): void {
  const set = readRecordAt(bare, "refs/handoff/leases", "leases.json");
  const mine = set.leases.filter((l: { agent: string }) => l.agent === agent);
  mine.forEach(change);
  const event = { type: "leased", task: "", agent, at: new Date().toISOString(), scope: "primary", worktree: null, branch: null, paths: mine.map((l: { pattern: string }) => l.pattern), exclusive: mine[0].exclusive, expires_at: mine[0].expires_at };
  const parent = gitOut(bare, "rev-parse", "refs/handoff/leases");
  setRef(bare, "refs/handoff/leases", recordCommit(bare, "leases.json", set, { parent, author: agent, message: eventMessage(event) }));
}

/** m1's and m2's leases on the remote, and the victim's clone that has synced them: written in-process (support/seed.ts). */
async function world() {
  const bare = emptyRemote();
  const attacker = cloneOf(bare);
  const victim = cloneOf(bare);
  await storeLease({ cwd: attacker, agent: "m1" }, ["src/m1.ts"]);
  await storeLease({ cwd: attacker, agent: "m2" }, ["src/m2.ts"]);
  await storeSync({ cwd: attacker, agent: "m1" });
  await storeSync({ cwd: victim, agent: "lead" });
  return { bare, attacker, victim };
}

test("the audit's leases of twelve {a,b} groups are refused on receive at once, and the lease set is kept back", async () => {
  const { bare, victim } = await world();
  const before = handoffRefs(victim);
  forgeLeases(bare, "m1", (l) => (l.pattern = `${groups(12, "{a,b}")}/x`));
  forgeLeases(bare, "m2", (l) => {
    l.pattern = `${groups(12, "{c,d}")}/y`;
    l.exclusive = true;
  });
  const started = Date.now();
  const r = cli(["sync", "--json"], { cwd: victim, agent: "lead" });
  const took = Date.now() - started;
  assert.ok(took < 15_000, `sync took ${took} ms`);
  assert.is(r.code, 3, r.stderr);
  const q = r.json.quarantined.find((x: { ref: string }) => x.ref === "refs/handoff/leases");
  assert.ok(q, JSON.stringify(r.json.quarantined));
  assert.match(q.reason, /the pattern "\{a,b\}\{a,b\}.*" expands to more than 64 paths/);
  assert.is(handoffRefs(victim), before, "no ref moved");
});

/** A legal glob of 64 alternatives (4,096 characters in all) that is costly to compare with another like it. */
function costlyGlob(tag: string, end: string): string {
  let p = `**/${groups(6, "{a,b}")}${tag}`;
  while (p.length - 24 + 2 + 8 + end.length <= 64) p += "*s";
  return p + "s".repeat(8) + end;
}

test("leases of patterns within the bounds cost a receive a bounded amount of matching, then the step is refused naming the budget", async () => {
  const { bare, attacker, victim } = await world();
  // Each comparison of m2's exclusive lease with one of m1's is tens of millions of units of
  // matching (4,096 pairs of alternatives, each a search over long segments of stars).
  const many = Array.from({ length: 30 }, (_, i) => costlyGlob(`m${i}`, "x"));
  await storeLease({ cwd: attacker, agent: "m1" }, many);
  await storeSync({ cwd: attacker, agent: "m1" });
  await storeSync({ cwd: victim, agent: "lead" });
  const before = handoffRefs(victim);
  forgeLeases(bare, "m2", (l) => {
    l.pattern = costlyGlob("m", "y");
    l.exclusive = true;
  });
  const r = cli(["sync", "--json"], { cwd: victim, agent: "lead" });
  assert.is(r.code, 3, r.stderr);
  const q = r.json.quarantined.find((x: { ref: string }) => x.ref === "refs/handoff/leases");
  assert.ok(q, JSON.stringify(r.json.quarantined));
  assert.match(q.reason, /m2.s lease on .* is too costly to check against the live leases: comparing it with m1's lease on .* went past the budget of glob matching one received ref may do \(4,000,000 units\)/, q.reason);
  assert.is(handoffRefs(victim), before, "no ref moved");
});

test("a lease or a task scope past the bound is refused as typed, with nothing written", () => {
  const repo = cloneOf(emptyRemote());
  ok(cli(["remote", "--none"], { cwd: repo, agent: "lead" }));
  const before = handoffRefs(repo);
  const lease = cli(["lease", `src/${groups(7, "{a,b}")}.ts`, "--exclusive"], { cwd: repo, agent: "lead" });
  assert.is(lease.code, 2, lease.stderr);
  assert.match(lease.stderr, /expands to more than 64 paths/);
  const seq = cli(["lease", "src/{1..100000}.ts"], { cwd: repo, agent: "lead" });
  assert.is(seq.code, 2, seq.stderr);
  const task = cli(["task", "add", "wide", "--scope", `${groups(33, "{a}")}/x`], { cwd: repo, agent: "lead" });
  assert.is(task.code, 2, task.stderr);
  assert.match(task.stderr, /has more than 32 \{ groups/);
  assert.is(handoffRefs(repo), before);
  // Within the bound, a pattern of many alternatives is as before.
  ok(cli(["lease", `src/${groups(6, "{a,b}")}.ts`, "--exclusive"], { cwd: repo, agent: "lead" }));
  assert.is(cli(["lease", "src/abab{a,b}{a,b}.ts"], { cwd: repo, agent: "other" }).code, 3);
});

test.run();
