// The head of the ready order known to hold no candidate (ready-index.ts): claim --next does not
// settle again the claimed tasks ahead of the first ready one at every call, yet a claim that runs
// out, a task released in the head, and a task one caller passed over still come back.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { claimCandidates, claimTask, createTask, releaseTask, type OpContext } from "../src/core/task-ops.ts";
import { icuSaysEnglish } from "../src/core/text-order.ts";
import type { Task } from "../src/core/task.ts";
import { readyCandidates } from "../src/store/ready-index.ts";

const T0 = Date.parse("2026-11-29T10:00:00.000Z");
const actor = (agent: string) => ({ agent, worktree: "/w", branch: "main", scope: "primary" as const });
const at = (ms: number, agent = "lead"): OpContext => ({ actor: actor(agent), now: new Date(T0 + ms) });
const MIN = 60_000;

/** `n` tasks, oldest first; the first `claimed` (or those `claimed` picks) held by `other`, the k-th for (10 + k) minutes. */
function board(n: number, claimed: number | ((i: number) => boolean)): Task[] {
  const held = typeof claimed === "number" ? (i: number) => i < claimed : claimed;
  return Array.from({ length: n }, (_, i) => {
    const made = createTask({ id: `t-${String(i).padStart(3, "0")}`, objective: `task ${i}`, priority: 0, scope: [], maxAttempts: 3 }, at(i));
    if (!made.ok) throw new Error(made.refusal.message);
    if (!held(i)) return made.record;
    const out = claimTask(made.record, at(1000, "other"), (10 + i) * MIN - 1000);
    if (!out.ok) throw new Error(out.refusal.message);
    return out.record;
  });
}

/** The same task, its `status` reads counted (the same object: the listing did not change). */
function counted(t: Task, reads: { n: number }): Task {
  const c = { ...t };
  Object.defineProperty(c, "status", { get: () => (reads.n++, t.status), enumerable: true });
  return c;
}

const first = (tasks: readonly Task[], ms: number, keep: (t: Task) => boolean = () => true) => readyCandidates(tasks, at(ms), keep).next().value as Task | undefined;

test("the order is claimCandidates's, made without a collator where textOrder needs none", () => {
  // Priorities, times and ids whose order depends on each: case, digits, punctuation.
  const ids = ["b-2", "B-1", "a_1", "a-10", "a-9", "A.3", "c", "c-0", "t-1", "T-1"];
  const tasks = ids.map((id, i) => {
    const made = createTask({ id, objective: id, priority: i % 3, scope: [], maxAttempts: 3 }, at(i % 4));
    if (!made.ok) throw new Error(made.refusal.message);
    return made.record;
  });
  // The order a collator gives (the default locale's, as localeCompare's).
  const c = new Intl.Collator();
  const byCollator = [...tasks].filter((t) => t.status === "todo").sort((a, b) => b.priority - a.priority || (a.created_at === b.created_at ? c.compare(a.id, b.id) : c.compare(a.created_at, b.created_at)));
  // Creating a collator loads ICU's collation data: every long-running server paid it at its first
  // claim. First in this file: the module made its collator once, at its first sort.
  const Collator = Intl.Collator;
  let made = 0;
  Intl.Collator = new Proxy(Collator, { construct: (c, a) => (made++, Reflect.construct(c, a)), apply: (c, self, a) => (made++, Reflect.apply(c, self, a)) });
  try {
    const order = [...readyCandidates(tasks, at(5), () => true)].map((t) => t.id);
    assert.equal(order, byCollator.map((t) => t.id));
    assert.equal(order, claimCandidates(tasks, at(5)).map((t) => t.id));
    if (icuSaysEnglish()) assert.is(made, 0, "a collator was made");
  } finally {
    Intl.Collator = Collator;
  }
});

test("the claimed tasks ahead of the first ready one are looked at once, not at every call", () => {
  const reads = { n: 0 };
  const tasks = board(300, 200).map((t, i) => (i < 200 ? counted(t, reads) : t));
  assert.is(first(tasks, 5 * MIN)?.id, "t-200");
  assert.ok(reads.n >= 200, `the first call looks at every claimed task (${reads.n})`);
  const after = reads.n;
  for (let k = 0; k < 5; k++) assert.is(first(tasks, 5 * MIN + k)?.id, "t-200");
  assert.is(reads.n, after, "later calls over the same records skip them");
});

test("a claim in the head that runs out makes its task a candidate again", () => {
  const tasks = board(50, 20);
  assert.is(first(tasks, 5 * MIN)?.id, "t-020");
  // t-000's claim ran for 10 minutes: past it (and a takeover's grace of none), it is first again.
  assert.is(first(tasks, 10 * MIN + 1)?.id, "t-000");
  assert.is(first(tasks, 5 * MIN)?.id, "t-020", "an earlier time: live again");
});

test("a task released in the head (a new record in the listing) is a candidate at the next call", () => {
  const tasks = board(50, 20);
  assert.is(first(tasks, 5 * MIN)?.id, "t-020");
  const next = [...tasks];
  const released = releaseTask(tasks[7]!, at(2 * MIN, "other"));
  if (!released.ok) throw new Error(released.refusal.message);
  next[7] = released.record;
  assert.is(first(next, 5 * MIN)?.id, "t-007");
  assert.is(first(next, 5 * MIN, (t) => t.id !== "t-007")?.id, "t-020");
});

test("a task one caller passes over stays a candidate for the next", () => {
  // t-020 is ready, claimed ones follow it up to t-030.
  const tasks = board(50, (i) => i < 20 || (i > 20 && i < 30));
  assert.is(first(tasks, 5 * MIN, (t) => t.id !== "t-020")?.id, "t-030");
  assert.is(first(tasks, 5 * MIN)?.id, "t-020");
  // Every task in review or final ahead of it is skipped alike; the order is the same after all.
  assert.equal([...readyCandidates(tasks, at(5 * MIN), () => true)].map((t) => t.id), [20, ...Array.from({ length: 20 }, (_, k) => 30 + k)].map((i) => `t-0${i}`));
});

test.run();
