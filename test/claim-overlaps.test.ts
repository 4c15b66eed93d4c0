// The overlap advisory at claim time: other live tasks' scopes and other agents' leases the claimed
// scope meets, warn for the same file or pattern, info otherwise; never a block; counted by stats.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp } from "./support/repo.ts";
import { storeClaim, storeLease, storeTasks } from "./support/seed.ts";
import { team } from "./support/team.ts";

test.after(cleanupTemp);

test("claim reports overlaps (info for containment, warn for the same file) in text and --json, and stats counts them", async () => {
  const t = team(["alice", "bob"]);
  // The tasks, alice's claim and her lease: written in-process (support/seed.ts).
  const tasks = [["sh", "src/shared/**"], ["sy", "src/shared/a.ts"], ["same", "src/shared/**"], ["far", "docs/**"]] as const;
  await storeTasks({ cwd: t.repo, agent: "lead" }, tasks.map(([id, scope]) => ({ id, objective: id, scope: [scope] })));
  const alice = { cwd: t.wt.alice!, agent: "alice" };
  await storeClaim(alice, "sh");
  await storeLease(alice, ["src/shared/a.ts"]);

  const sy = t.as("bob", ["claim", "sy"]);
  assert.is(sy.code, 0, "an overlap never blocks");
  assert.match(sy.stdout, /claimed sy/);
  assert.match(sy.stdout, /overlaps \(advisory, nothing is blocked\):/);
  assert.match(sy.stdout, /warn  src\/shared\/a\.ts overlaps src\/shared\/a\.ts \(alice, no task\)/);
  assert.match(sy.stdout, /info  src\/shared\/a\.ts overlaps src\/shared\/\*\* \(alice, task sh\)/);
  assert.is(t.as("bob", ["release", "sy"]).code, 0);

  const same = t.as("bob", ["claim", "same", "--json"]);
  assert.is(same.code, 0);
  assert.is(same.json.id, "same");
  assert.equal(same.json.overlaps.map((o: { task: string; agent: string; pattern: string; verdict: string }) => [o.task, o.agent, o.pattern, o.verdict]), [
    ["sh", "alice", "src/shared/**", "warn"],
    [null, "alice", "src/shared/a.ts", "info"],
  ]);
  assert.is(t.as("bob", ["release", "same"]).code, 0);

  const far = t.as("bob", ["claim", "far", "--json"]);
  assert.equal(far.json.overlaps, [], "no overlap, nothing said");
  assert.not.match(t.as("bob", ["release", "far"]).stdout, /overlaps/);

  const next = t.as("bob", ["ready", "--claim", "--json"]);
  assert.is(next.code, 0, next.stderr);
  assert.ok(Array.isArray(next.json.overlaps), "ready --claim reports overlaps too");
  const leases = t.as("lead", ["leases", "--json"]).json as { agent: string; task: string | null }[];
  assert.ok(leases.some((l) => l.agent === "bob" && l.task === next.json.id), "ready --claim leases the scope like claim does");

  const stats = t.as("lead", ["stats", "--json"]).json;
  assert.ok(stats.overlaps.warn >= 2 && stats.overlaps.info >= 2, JSON.stringify(stats.overlaps));
  assert.match(t.as("lead", ["stats"]).stdout, /overlaps at claim time\s+\d+ warn, \d+ info/);
});

test("claiming a task one holds again renews it: the overlaps are shown again but counted once", async () => {
  const t = team(["alice", "bob"]);
  await storeTasks({ cwd: t.repo, agent: "lead" }, [{ id: "x", objective: "x", scope: ["src/x.ts"] }]);
  await storeLease({ cwd: t.wt.alice!, agent: "alice" }, ["src/x.ts"]);
  const first = t.as("bob", ["claim", "x", "--json"]);
  assert.equal(first.json.overlaps.map((o: { verdict: string }) => o.verdict), ["warn"]);
  const again = t.as("bob", ["claim", "x", "--json"]);
  assert.is(again.code, 0, again.stderr);
  assert.equal(again.json.overlaps.map((o: { verdict: string }) => o.verdict), ["warn"], "still shown");
  assert.equal(t.as("lead", ["stats", "--json"]).json.overlaps, { warn: 1, info: 0 });
});

test("a renewal at the very instant of its grant (a scripted clock) is still a renewal: counted once", async () => {
  const t = team(["alice", "bob"]);
  const at = { HANDOFF_NOW: "2026-11-20T10:00:00.000Z" };
  await storeTasks({ cwd: t.repo, agent: "lead", now: at.HANDOFF_NOW }, [{ id: "x", objective: "x", scope: ["src/x.ts"] }]);
  await storeLease({ cwd: t.wt.alice!, agent: "alice", now: at.HANDOFF_NOW }, ["src/x.ts"]);
  assert.is(t.as("bob", ["claim", "x"], at).code, 0);
  const again = t.as("bob", ["claim", "x", "--json"], at);
  assert.is(again.code, 0, again.stderr);
  assert.equal(again.json.overlaps.map((o: { verdict: string }) => o.verdict), ["warn"], "still shown");
  assert.equal(t.as("lead", ["stats", "--json"], at).json.overlaps, { warn: 1, info: 0 });
});

test.run();
