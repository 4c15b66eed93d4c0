// Which ready task claim --next goes after under contention: the pure draw among the best few.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { candidateWeight, chooseCandidate, contendersAmong, poolSize, MAX_POOL } from "../src/core/candidate-choice.ts";
import { createTask, claimTask, claimCandidates, type OpContext } from "../src/core/task-ops.ts";
import { MAX_RIVALS, noteRival, recentRivals, RIVAL_MS } from "../src/core/rivals.ts";
import type { Actor } from "../src/core/identity.ts";
import type { Task } from "../src/core/task.ts";
import type { Outcome } from "../src/core/outcome.ts";

const T0 = Date.parse("2026-11-29T10:00:00.000Z");
const MIN = 60_000;
const actor = (agent: string): Actor => ({ agent, worktree: "/w", branch: "main", scope: "primary" });
const ctx = (agent: string, ms = 0): OpContext => ({ actor: actor(agent), now: new Date(T0 + ms) });

function ok(o: Outcome<Task>): Task {
  if (!o.ok) throw new Error(o.refusal.message);
  return o.record;
}

function task(id: string, priority: number, ageMin: number): Task {
  return ok(createTask({ id, objective: `do ${id}`, priority, scope: [], maxAttempts: 3 }, ctx("lead", -ageMin * MIN)));
}

test("alone, a caller takes a task of the best priority, never a lower one", () => {
  const best = claimCandidates([task("low", 0, 50), task("high", 5, 1)], ctx("a"));
  for (const r of [0, 0.3, 0.999]) assert.is(chooseCandidate(best, { now: new Date(T0), random: r, contenders: 0, lost: 0 })!.id, "high");
  assert.is(chooseCandidate([], { now: new Date(T0), random: 0.5, contenders: 3, lost: 0 }), undefined);
});

test("alone, a caller takes the queue in order (oldest of the best priority); after a lost race it spreads", () => {
  const best = claimCandidates([task("a1", 1, 9), task("a2", 1, 8), task("a3", 1, 7), task("a4", 1, 6), task("a5", 1, 5), task("b", 0, 60)], ctx("a"));
  const draws = (lost: number) => new Set([0, 0.2, 0.4, 0.6, 0.8, 0.99].map((r) => chooseCandidate(best, { now: new Date(T0), random: r, contenders: 0, lost })!.id));
  assert.equal([...draws(0)], ["a1"]);
  assert.equal([...draws(2)].sort(), ["a1", "a2", "a3", "a4"]);
  // A caller that knows of racers (live claims or recent rivals) spreads at once, never lower.
  const contended = new Set([0, 0.2, 0.4, 0.6, 0.8, 0.99].map((r) => chooseCandidate(best, { now: new Date(T0), random: r, contenders: 2, lost: 0 })!.id));
  assert.equal([...contended].sort(), ["a1", "a2", "a3", "a4", "a5"]);
});

test("the pool is two per likely racer, doubles with each lost race, and is bounded", () => {
  assert.is(poolSize(300, 0, 0), 1);
  assert.is(poolSize(300, 0, 1), 2);
  assert.is(poolSize(300, 29, 0), 59);
  assert.is(poolSize(300, 3, 1), 14);
  assert.is(poolSize(300, 3, 2), 28);
  assert.is(poolSize(5, 29, 0), 5);
  assert.is(poolSize(300, 200, 9), MAX_POOL);
});

test("rivals: the winners of races lost in the last minute, one per agent, never the caller itself", () => {
  let text = noteRival(undefined, "b", T0);
  text = noteRival(text, "c", T0 + 1000);
  text = noteRival(text, "b", T0 + 2000);
  assert.is(recentRivals(text, "a", T0 + 3000), 2);
  assert.is(recentRivals(text, "b", T0 + 3000), 1);
  assert.is(recentRivals(text, "a", T0 + RIVAL_MS + 1500), 1, "c's race is over a minute old");
  assert.is(recentRivals(text, "a", T0 - 1), 0, "a stamp from the future counts for nothing");
  assert.is(recentRivals("garbage\n12 \n\n", "a", T0), 0);
  assert.is(noteRival(text, "two words", T0), text, "a malformed holder is not recorded");
  let many: string | undefined;
  for (let i = 0; i < 200; i++) many = noteRival(many, `r${i}`, T0 + i);
  assert.is(recentRivals(many, "a", T0 + 200), MAX_RIVALS);
});

test("weights: a priority step halves, the oldest weighs twice the newest", () => {
  const old = task("old", 2, 60);
  const fresh = task("fresh", 2, 0);
  const lower = task("lower", 1, 60);
  assert.is(candidateWeight(old, 2, 60 * MIN, new Date(T0)), 2);
  assert.is(candidateWeight(fresh, 2, 60 * MIN, new Date(T0)), 1);
  assert.is(candidateWeight(lower, 2, 60 * MIN, new Date(T0)), 1);
});

test("30 racers drawing over 300 tasks spread out: few collide on any one task", () => {
  const tasks = Array.from({ length: 300 }, (_, i) => task(`t${String(i).padStart(3, "0")}`, 0, 300 - i));
  const best = claimCandidates(tasks, ctx("a"));
  // a fixed sequence of draws, so the test is exact
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const picks = Array.from({ length: 30 }, () => chooseCandidate(best, { now: new Date(T0), random: rand(), contenders: 29, lost: 0 })!.id);
  const counts = new Map<string, number>();
  for (const p of picks) counts.set(p, (counts.get(p) ?? 0) + 1);
  assert.ok(counts.size >= 20, `only ${counts.size} distinct picks`);
  assert.ok(Math.max(...counts.values()) <= 3);
  // every pick is among the best 59 (the oldest)
  assert.ok(picks.every((id) => Number(id.slice(1)) < 59), picks.join(" "));
  // the extremes of the draw stay in the pool
  assert.is(chooseCandidate(best, { now: new Date(T0), random: 0, contenders: 29, lost: 0 })!.id, "t000");
  assert.is(chooseCandidate(best, { now: new Date(T0), random: 0.9999999, contenders: 29, lost: 0 })!.id, "t058");
});

test("contenders: other agents holding live claims, each counted once", () => {
  const a = ok(claimTask(task("x", 0, 5), ctx("ann"), 10 * MIN));
  const b = ok(claimTask(task("y", 0, 5), ctx("ann"), 10 * MIN));
  const c = ok(claimTask(task("z", 0, 5), ctx("bob"), 10 * MIN));
  const mine = ok(claimTask(task("w", 0, 5), ctx("me"), 10 * MIN));
  const expired = ok(claimTask(task("v", 0, 5), ctx("cid", -30 * MIN), 10 * MIN));
  assert.is(contendersAmong([a, b, c, mine, expired, task("free", 0, 1)], "me", new Date(T0)), 2);
});

test.run();
