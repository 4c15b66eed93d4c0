// The views agree with the writes about the takeover grace: through a sync remote, another agent's
// lease (or claim) expired by this clock still stands for max_clock_skew past its expiry, and a
// write of its path is refused until then (clock-skew-leases.test.ts). So `leases`, MCP's
// list_leases, `status`, the dashboard's lease view, the session-start context and a claim's
// overlap advisory all show it, marked with when it stops standing, and drop it past the grace.
// The caller's own expired lease stays hidden: the grace is for other agents' clocks.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { validUntil } from "../src/dashboard/snapshot.ts";
import { overStdio } from "./support/mcp.ts";
import { cleanupTemp, cli, gitOut } from "./support/repo.ts";
import { storeClaim, storeLease, storeSync, storeTasks, storeUnlease } from "./support/seed.ts";
import { at, dashboardText, GRACE_END, INSIDE, PAST, snapshotAt, T, twoClones } from "./support/grace-clock.ts";

test.after(cleanupTemp);


/**
 * One remote and two clones: in b, bob holds task t (scope src/t/**, that scope's lease released,
 * lib/x.ts leased for it), an exclusive lease on src/a.ts, shared ones on docs/guide.md and (for a
 * task not here) docs/old.md, all for one minute from T; in
 * a, alice's own one-minute lease on notes/mine.md (taken at T + 20s) and bob's state synced at
 * INSIDE, 30 s past bob's expiries by alice's clock. Made once, before the tests, in-process
 * (support/seed.ts): the tests below read it, the claim test last, which writes.
 */
let made: { a: string } | null = null;
test.before(async () => {
  const { a, b } = twoClones("grace-views");
  const bob = { cwd: b, agent: "bob", now: new Date(T).toISOString() };
  await storeTasks({ ...bob, push: true }, [{ id: "t", objective: "bob's work", scope: ["src/t/**"] }]);
  await storeClaim({ ...bob, push: true }, "t", { ttl: "1m" });
  // Its scope lease released: the overlap advisory below finds the claim by itself. A lease for the task stands elsewhere.
  await storeUnlease(bob, ["src/t/**"]);
  await storeLease(bob, ["lib/x.ts"], { task: "t" });
  await storeLease(bob, ["src/a.ts"], { exclusive: true, ttl: "1m", reason: "refactor" });
  await storeLease(bob, ["docs/guide.md"], { ttl: "1m" });
  // For a task nobody has here: flagged (its task is no longer live), so it may be force-released.
  await storeLease(bob, ["docs/old.md"], { task: "gone", ttl: "1m" });
  await storeSync(bob);
  await storeLease({ cwd: a, agent: "alice", now: new Date(T + 20_000).toISOString() }, ["notes/mine.md"], { ttl: "1m" });
  await storeSync({ cwd: a, agent: "alice", now: new Date(INSIDE).toISOString() });
  const set = gitOut(a, "show", "refs/handoff/leases:leases.json");
  assert.match(set, /notes\/mine\.md/, "alice's own expired lease is still in the set (a view hides it)");
  assert.match(set, /src\/a\.ts/);
  made = { a };
});
function setup(): { a: string } {
  if (!made) throw new Error("the shared clones are made in test.before");
  return made;
}

const alice = (args: string[], ms: number) => cli(args, { cwd: setup().a, agent: "alice", env: at(ms) });
const listed = (ms: number) => (alice(["leases", "--json"], ms).json as any[]).map((l) => `${l.agent}:${l.pattern}:${l.grace_until ?? "-"}`);

test("leases and MCP list_leases list another agent's lease inside the grace, with grace_until and a mark; not the caller's own expired one; nothing past the grace", async () => {
  const { a } = setup();
  assert.equal(listed(INSIDE), [`bob:docs/guide.md:${GRACE_END}`, `bob:docs/old.md:${GRACE_END}`, `bob:lib/x.ts:${GRACE_END}`, `bob:src/a.ts:${GRACE_END}`]);
  const text = alice(["leases"], INSIDE);
  assert.is(text.code, 0, text.stderr);
  assert.match(text.stdout, /src\/a\.ts\s+exclusive\s+bob\s+expired 30s ago by this clock, stands for the takeover grace \(clock skew\) until 2026-11-30T09:02:00\.000Z \(in 30s\)\s+— refactor/);
  assert.not.match(text.stdout, /notes\/mine\.md/, "the caller's own expired lease stays hidden");
  // The write agrees: alice may not lease what is listed as bob's.
  assert.is(alice(["lease", "src/a.ts", "--exclusive"], INSIDE).code, 3);
  const mcp = await overStdio(a, { agent: "alice", env: at(INSIDE) });
  try {
    const r = await mcp.call("list_leases", {});
    assert.not.ok(r.isError, JSON.stringify(r.content));
    const leases = (r.structuredContent as any).leases as any[];
    assert.equal(leases.map((l) => `${l.agent}:${l.pattern}:${l.grace_until}`), [`bob:docs/guide.md:${GRACE_END}`, `bob:docs/old.md:${GRACE_END}`, `bob:lib/x.ts:${GRACE_END}`, `bob:src/a.ts:${GRACE_END}`]);
    assert.match((r.content[0] as { text: string }).text, /stands for the takeover grace/);
  } finally {
    await mcp.close();
  }
  assert.equal(listed(PAST), [], "past the grace nothing stands");
});

test("status lists another agent's lease inside the grace, with grace_until in --json and a note in the text; its task still held through the grace (no flag)", () => {
  const json = alice(["status", "--json", "--no-conflicts"], INSIDE);
  assert.is(json.code, 0, json.stderr);
  const rows = json.json.leases as any[];
  assert.equal(rows.map((r) => `${r.agent}:${r.pattern}:${r.grace_until ?? "-"}`), [`bob:docs/guide.md:${GRACE_END}`, `bob:docs/old.md:${GRACE_END}`, `bob:lib/x.ts:${GRACE_END}`, `bob:src/a.ts:${GRACE_END}`]);
  const scope = rows.find((r) => r.pattern === "lib/x.ts");
  assert.equal(scope.flags, [], "bob's claim of t stands through the grace too: not 'its task is not held by it'");
  assert.is(scope.expires_in_ms, -30_000);
  const text = alice(["status", "--no-conflicts"], INSIDE);
  assert.is(text.code, 0, text.stderr);
  assert.match(text.stdout, /bob\s+src\/a\.ts\s+exclusive\s+no task\s+expired 30s ago by this clock, stands for the takeover grace \(clock skew\) until 2026-11-30T09:02:00\.000Z \(in 30s\)/);
  assert.not.match(text.stdout, /notes\/mine\.md/, "the caller's own expired lease stays hidden");
  assert.equal(alice(["status", "--json", "--no-conflicts"], PAST).json.leases, [], "past the grace nothing stands");
});

test("the dashboard's lease view lists another agent's lease inside the grace: grace_until in its state, a mark on the page, built again when the grace ends", async () => {
  const snapshot = (ms: number) => snapshotAt(setup().a, ms);
  const inside = await snapshot(INSIDE);
  assert.equal(inside.leases.map((l) => `${l.lease.agent}:${l.lease.pattern}:${l.grace_until ?? "-"}`), [`bob:docs/guide.md:${GRACE_END}`, `bob:docs/old.md:${GRACE_END}`, `bob:lib/x.ts:${GRACE_END}`, `bob:src/a.ts:${GRACE_END}`]);
  assert.is(validUntil(inside, 3_600_000), T + 120_000, "the server looks again when the grace ends");
  assert.equal((await snapshot(PAST)).leases, [], "past the grace nothing stands");
  // The page marks the row (a real browser, as dashboard-browser.test.ts).
  let release = 0;
  const row = await dashboardText(setup().a, "leases", 'tr[data-pattern="src/a.ts"]', async (page) => {
    release = await page.locator('tr[data-pattern="docs/old.md"] button[data-action=unlease]').count();
  });
  assert.match(row, /bob.*stands for the takeover grace \(clock skew\) until 2026-11-30T09:02:00\.000Z/);
  assert.is(release, 1, "a flagged lease inside the grace offers a force release");
});

test("a flagged lease inside the grace, listed with its force release, can be force-released (unlease --reclaim)", () => {
  const r = alice(["unlease", "docs/old.md", "--reclaim", "--reason", "its task is gone", "--json"], INSIDE);
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.equal(listed(INSIDE), [`bob:docs/guide.md:${GRACE_END}`, `bob:lib/x.ts:${GRACE_END}`, `bob:src/a.ts:${GRACE_END}`]);
});

test("the session-start context lists another agent's lease inside the grace among the files others hold, with how long it stands", () => {
  const { a } = setup();
  const input = JSON.stringify({ session_id: "s-alice", cwd: a, hook_event_name: "SessionStart", source: "startup" });
  const payload = (ms: number): string => {
    const r = cli(["hook", "claude-session-start"], { cwd: a, agent: "alice", input, env: at(ms) });
    assert.is(r.code, 0, r.stderr);
    return JSON.parse(r.stdout).hookSpecificOutput.additionalContext;
  };
  const inside = payload(INSIDE);
  assert.match(inside, /Files other agents hold:/);
  assert.match(inside, /- src\/a\.ts: EXCLUSIVE, do not edit \(bob, expired 30s ago by this clock, stands for the takeover grace \(clock skew\) for 30s more\)/);
  assert.match(inside, /- lib\/x\.ts: shared, coordinate before editing \(bob, task t, expired 30s ago by this clock, stands for the takeover grace \(clock skew\) for 30s more\)/);
  assert.not.match(inside, /notes\/mine\.md|-30s| left\)/, "no negative time left, nothing of the caller's own");
  assert.not.match(payload(PAST), /src\/a\.ts/, "past the grace nothing stands");
});

test("a claim's overlap advisory counts another agent's claim and leases inside the grace as near work", () => {
  assert.is(alice(["task", "add", "mine", "--id", "mine", "--scope", "src/t/x.ts", "--scope", "docs/**"], INSIDE).code, 0);
  const claim = alice(["claim", "mine", "--json"], INSIDE);
  assert.is(claim.code, 0, claim.stderr);
  assert.equal(claim.json.overlaps.map((o: any) => `${o.verdict} ${o.task}:${o.agent}:${o.pattern}`), ["info null:bob:docs/guide.md", "info t:bob:src/t/**"]);
  // Past the grace (alice's claim renewed: its overlaps are told again): bob's work stands no more, nothing near.
  const late = alice(["claim", "mine", "--json"], PAST);
  assert.is(late.code, 0, late.stderr);
  assert.equal(late.json.overlaps.filter((o: any) => o.agent === "bob"), []);
});

test.run();
