// `git handoff stats` against a scripted history whose figures are known: every step at a fixed
// HANDOFF_NOW, so durations are exact. The refusals, hooks, handoffs, verifications and reviews run
// the real CLI; the plain adds, claims, leases and a done are written through the store (seed.ts).
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { computeStats, countedSince, isCountedList } from "../src/core/stats.ts";
import { cleanupTemp, cli, gitOut, handoffRefs, tempRepo } from "./support/repo.ts";
import { storeClaim, storeDone, storeLease, storeTasks, type Actor } from "./support/seed.ts";

test.after(cleanupTemp);

const T0 = Date.parse("2026-03-02T10:00:00.000Z");
const at = (min: number) => new Date(T0 + min * 60_000).toISOString();

function step(repo: string, min: number, agent: string, args: string[], input?: string) {
  // Hooks hand their catch records to a detached writer; the test switch waits for it (exact stats).
  return cli(args, { cwd: repo, agent, env: { HANDOFF_NOW: at(min), HANDOFF_HOOK_CATCH_WAIT: "1" }, ...(input !== undefined ? { input } : {}) });
}

function ok(r: ReturnType<typeof cli>, what: string) {
  assert.is(r.code, 0, `${what}: ${r.stderr}`);
  return r;
}

function edit(repo: string, file: string) {
  return JSON.stringify({
    session_id: "s-b",
    transcript_path: "/tmp/t.jsonl",
    cwd: repo,
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "Edit",
    tool_input: { file_path: join(repo, file), old_string: "a", new_string: "b", replace_all: false },
    tool_use_id: "toolu_1",
  });
}

/** The history: every figure below is known from it. */
async function history(): Promise<string> {
  const repo = tempRepo();
  const by = (min: number, agent: string): Actor => ({ cwd: repo, agent, now: at(min) });
  await storeTasks(by(0, "lead"), [{ id: "api", objective: "the api" }, { id: "ui", objective: "the ui", after: ["api"] }, { id: "docs", objective: "the docs" }]);
  await storeClaim(by(0, "a"), "api");
  assert.is(step(repo, 0, "b", ["claim", "api"]).code, 3, "duplicate claim refused");
  assert.is(step(repo, 0, "b", ["claim", "ui"]).code, 3, "blocked claim refused");
  await storeLease(by(0, "a"), ["src/api/**"], { exclusive: true });
  await storeLease(by(0, "c"), ["docs/guide.md", "web/**"]);
  await storeLease(by(0, "c"), ["lib/**"], { ttl: "1m" });
  await storeClaim(by(0, "c"), "docs", { ttl: "1m" });
  // c's lease on lib/** ran out at 10:01: d takes lib/** over at 10:02, and docs at 10:03.
  await storeLease(by(2, "d"), ["lib/**"], { exclusive: true });
  ok(step(repo, 2, "a", ["handoff", "api", "--contract", "GET /api"]), "a hands api over");
  await storeClaim(by(3, "d"), "docs");
  ok(step(repo, 4, "d", ["handoff", "docs", "--note", "never acknowledged"]), "d hands docs over");
  ok(step(repo, 5, "b", ["ack", "api#1"]), "b acks");
  // b's editor runs into three leases of others: deny, warn, info; and one free file (ok: not logged).
  for (const [file, decision] of [["src/api/users.ts", "deny"], ["docs/guide.md", undefined], ["web/app.css", undefined], ["free.txt", undefined]] as const) {
    const r = step(repo, 6, "b", ["hook", "claude-pre-tool-use"], edit(repo, file));
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout ? JSON.parse(r.stdout).hookSpecificOutput.permissionDecision : undefined, decision, file);
  }
  await storeDone(by(10, "a"), "api"); // ui unblocked after 10m
  // Review: one pass accepted, one pass rejected, one failing verification.
  await storeTasks(by(11, "lead"), ["r1", "r2", "r3"].map((id) => ({ id, objective: `review ${id}`, verify: id === "r3" ? "false" : "true" })));
  for (const id of ["r1", "r2", "r3"]) await storeClaim(by(11, "e"), id, { overCapacity: true });
  ok(step(repo, 12, "e", ["done", "r1"]), "r1 to review");
  ok(step(repo, 12, "e", ["done", "r2"]), "r2 to review");
  assert.is(step(repo, 12, "e", ["done", "r3"]).code, 3, "r3's verification fails");
  ok(step(repo, 13, "lead", ["review", "accept", "r1"]), "accept r1");
  ok(step(repo, 13, "lead", ["review", "reject", "r2", "--reason", "no"]), "reject r2");
  return repo;
}

test("stats over a scripted history: every figure as scripted", async () => {
  const repo = await history();
  const r = ok(step(repo, 20, "lead", ["stats", "--json"]), "stats");
  const s = r.json;
  assert.equal(s.claims, { granted: 6, refused_duplicate: 1, refused_blocked: 1 });
  assert.equal(s.hooks, { deny: 1, warn: 1, info: 1, by_hook: { "claude-pre-tool-use": { deny: 1, warn: 1, info: 1 } } });
  assert.equal(s.conflicts, { predicted: 0, paths: 0 });
  assert.equal(s.handoffs, { delivered: 2, acknowledged: 1, ack_rate: 0.5, time_to_ack: { count: 1, median_ms: 180_000, mean_ms: 180_000, max_ms: 180_000 } });
  assert.equal(s.blocked, { tasks: 1, unblocked: 1, still_blocked: 0, time_blocked: { count: 1, median_ms: 600_000, mean_ms: 600_000, max_ms: 600_000 }, total_ms: 600_000, ongoing_ms: 0 });
  assert.equal(s.leases, { file_leases_expired: 1, claims_expired: 1, taken_over: 2, reclaimed: 0 });
  assert.equal(s.review, { verified_passed: 2, verified_failed: 1, accepted: 1, rejected: 1 });
  assert.is(s.since, null);
  assert.is(s.until, at(20));

  const text = ok(step(repo, 20, "lead", ["stats"]), "stats text").stdout;
  assert.match(text, /duplicate claims refused\s+1/);
  assert.match(text, /deny 1, warn 1, info 1/);
  assert.match(text, /2 delivered, 1 acknowledged \(50%\)/);
  assert.match(text, /handoff -> ack\s+median 3m/);
  assert.match(text, /time blocked\s+median 10m/);
  assert.match(text, /1 file leases expired, 1 claims expired, 2 taken over/);
  assert.match(text, /verification 2 passed \/ 1 failed; 1 accepted \/ 1 rejected/);

  // The catches live on the catcher's own log ref, readable with plain git.
  const refs = handoffRefs(repo, { logs: true });
  assert.match(refs, /refs\/handoff\/log\/b /);
  assert.not.match(refs, /refs\/handoff\/log\/(a|c|d|e|lead) /, "only b was refused or caught");
});

test("stats --since counts only what happened inside the window, with state from before it", async () => {
  const repo = await history();
  const s = ok(step(repo, 20, "lead", ["stats", "--since", at(4), "--json"]), "stats since").json;
  assert.is(s.since, at(4));
  assert.equal(s.claims, { granted: 3, refused_duplicate: 0, refused_blocked: 0 });
  // Only docs#1 was handed over inside the window; the ack of api#1 belongs to a handoff before it.
  assert.equal(s.handoffs, { delivered: 1, acknowledged: 0, ack_rate: 0, time_to_ack: { count: 0, median_ms: null, mean_ms: null, max_ms: null } });
  // ui waited from 10:00 to 10:10: 6 minutes of that are inside the window.
  assert.is(s.blocked.total_ms, 360_000);
  assert.equal(s.leases, { file_leases_expired: 0, claims_expired: 0, taken_over: 0, reclaimed: 0 });
  // A duration back from now works too, and a bad --since changes nothing and says why.
  assert.is(ok(step(repo, 20, "lead", ["stats", "--since", "16m", "--json"]), "since 16m").json.since, at(4));
  const before = handoffRefs(repo, { logs: true });
  const bad = step(repo, 20, "lead", ["stats", "--since", "yesterday"]);
  assert.is(bad.code, 2, bad.stderr);
  assert.is(bad.stderr.trim().split("\n").length >= 1, true);
  assert.is(handoffRefs(repo, { logs: true }), before);

  // A damaged log ref is named and skipped; the other figures stay.
  const blob = gitOut(repo, "hash-object", "-w", "--stdin");
  gitOut(repo, "update-ref", "refs/handoff/log/zed", blob);
  const damaged = step(repo, 20, "lead", ["stats", "--json"]);
  assert.is(damaged.code, 0, damaged.stderr);
  assert.match(damaged.stderr, /refs\/handoff\/log\/zed is corrupt/);
  assert.is(damaged.json.handoffs.delivered, 2);
});

test("a blocked task still waiting is counted up to now; cancelling it stops the clock", () => {
  const e = (type: string, min: number, extra: Record<string, unknown> = {}) =>
    ({ type, task: "t", agent: "x", at: at(min), scope: "primary", worktree: null, branch: null, ...extra }) as never;
  const events = [e("created", 0, { task: "dep" }), e("created", 0, { after: ["dep"] }), e("created", 1, { task: "u" }), e("depended", 2, { task: "u", on: "dep" }), e("cancelled", 5, { task: "u" })];
  const s = computeStats(events, { since: null, now: new Date(T0 + 30 * 60_000) });
  assert.is(s.blocked.tasks, 2);
  assert.is(s.blocked.still_blocked, 1);
  assert.is(s.blocked.ongoing_ms, 30 * 60_000);
  assert.is(s.blocked.total_ms, 3 * 60_000, "u waited from 10:02 until it was cancelled at 10:05");
  assert.is(computeStats([], { since: null, now: new Date(T0) }).handoffs.ack_rate, null);
});

test("times only counted: kept as the index's base-36 lists, counted whole or from --since on", () => {
  const times = [T0 - 60_000, T0, T0 + 1, T0 + 60_000, T0 - 1];
  const lists = [times.slice(0, 3).map((t) => t.toString(36)).join(","), times.slice(3).map((t) => t.toString(36)).join(",")];
  assert.ok(lists.every(isCountedList));
  assert.is(countedSince(lists, -Infinity), 5);
  // Without a window the index gives how many there are, not the lists; a window needs the lists.
  assert.is(countedSince({ total: 5 }, -Infinity), 5);
  assert.throws(() => countedSince({ total: 5 }, T0), /needs the counted times/);
  for (const since of [T0 - 120_000, T0 - 1, T0, T0 + 1, T0 + 2, T0 + 60_000, T0 + 60_001]) {
    assert.is(countedSince(lists, since), times.filter((t) => t >= since).length, `since ${since}`);
  }
  // What parseInt(t, 36) reads whole passes (Date.parse of a bad time wrote "NaN"); anything else is damage.
  for (const good of ["0", "-1a", "mvx2cqo0,mvx2crfs", "NaN"]) assert.ok(isCountedList(good), good);
  for (const bad of ["", ",", "a,", ",a", "a,,b", "a b", "12x!", "1.5", "a\tb", "--1"]) assert.not.ok(isCountedList(bad), bad);
  // computeStats adds them to the window's events and to nothing else.
  const s = computeStats([], { since: new Date(T0), now: new Date(T0 + 120_000), counted: lists });
  assert.is(s.events, 3);
  assert.is(s.claims.granted, 0);
});

test.run();
