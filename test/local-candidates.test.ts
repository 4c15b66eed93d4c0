// How a caller in this clone goes through the ready tasks (ready-index.ts): in order while it
// has not lost a race, drawn among the next few after a lost race (so the losers do not all move
// on to the same next task), never a task outside the pool, never one twice.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTask, type OpContext } from "../src/core/task-ops.ts";
import type { Task } from "../src/core/task.ts";
import { LocalCandidates, noteLocalLoss } from "../src/store/ready-index.ts";

const T0 = Date.parse("2026-11-29T10:00:00.000Z");
const ctx = (ms: number): OpContext => ({ actor: { agent: "lead", worktree: "/w", branch: "main", scope: "primary" }, now: new Date(T0 + ms) });

function tasks(n: number, priority: (i: number) => number = () => 0): Task[] {
  return Array.from({ length: n }, (_, i) => {
    const o = createTask({ id: `t-${i}`, objective: `task ${i}`, priority: priority(i), scope: [], maxAttempts: 3 }, ctx(i * 1000));
    if (!o.ok) throw new Error(o.refusal.message);
    return o.record;
  });
}

const now = new Date(T0 + 3_600_000);

test("a caller that has not lost a race takes the candidates in order, whatever its draw", () => {
  const all = tasks(10);
  const c = new LocalCandidates(all[Symbol.iterator](), {});
  assert.equal([0.99, 0.5, 0, 0.7].map((r) => c.next(now, 0, r)?.id), ["t-0", "t-1", "t-2", "t-3"]);
});

test("after a lost race a caller draws among the next few; the pool doubles with each race lost", () => {
  const all = tasks(40);
  const drawn = (lost: number) => new Set([0, 0.2, 0.4, 0.6, 0.8, 0.999].map((r) => new LocalCandidates(all[Symbol.iterator](), {}).next(now, lost, r)!.id));
  const one = drawn(1);
  assert.ok(one.size > 1, "losers spread out");
  for (const id of one) assert.ok(Number(id.slice(2)) < 6, `${id} is among the next 6`);
  for (const id of drawn(2)) assert.ok(Number(id.slice(2)) < 12, `${id} is among the next 12`);
});

test("no candidate is handed out twice, and the sequence ends when the candidates do", () => {
  const all = tasks(7);
  const c = new LocalCandidates(all[Symbol.iterator](), {});
  const seen: string[] = [];
  for (let i = 0; i < 10; i++) {
    const t = c.next(now, i % 3, (i * 0.37) % 1);
    if (t) seen.push(t.id);
  }
  assert.equal([...seen].sort(), all.map((t) => t.id).sort());
});

test("a process that lost a race lately draws from its first pick on; another process keeps the order", () => {
  const all = tasks(40);
  const loser = {};
  noteLocalLoss(loser);
  const picks = new Set([0.2, 0.5, 0.8, 0.999].map((r) => new LocalCandidates(all[Symbol.iterator](), loser).next(now, 0, r)!.id));
  assert.ok(picks.size > 1);
  assert.is(new LocalCandidates(all[Symbol.iterator](), {}).next(now, 0, 0.999)!.id, "t-0");
});

test("spreading never takes a lower priority while a higher one is left", () => {
  // best first, as readyCandidates orders them: three of priority 2, then 1, then 0
  const all = tasks(12, (i) => (i < 3 ? 2 : i < 7 ? 1 : 0));
  for (const r of [0, 0.3, 0.6, 0.999]) {
    const c = new LocalCandidates(all[Symbol.iterator](), {});
    const order = Array.from({ length: 12 }, (_, k) => c.next(now, 3, (r + k * 0.41) % 1)!.priority);
    assert.equal(order, [...order].sort((a, b) => b - a), `draw ${r}: ${order.join(" ")}`);
  }
});

test.run();
