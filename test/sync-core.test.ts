// The pure pieces of sync: replaying recorded intents on another clone's state, the fencing
// verdict, and reading per-ref push results from porcelain output.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { HandoffEvent } from "../src/core/event.ts";
import { fenceRefusal } from "../src/core/fence.ts";
import type { Actor } from "../src/core/identity.ts";
import { isDerivedEvent, replayTaskEvent } from "../src/core/replay.ts";
import type { Task } from "../src/core/task.ts";
import { claimTask, createTask, releaseTask } from "../src/core/task-ops.ts";
import { parsePorcelain } from "../src/git/push-lease.ts";

const actor = (agent: string): Actor => ({ agent, worktree: null, branch: null, scope: "primary" });
const T0 = new Date("2026-01-01T10:00:00Z");
const at = (min: number) => new Date(T0.getTime() + min * 60_000);

function fresh(): Task {
  const out = createTask({ id: "t", objective: "x", priority: 0, scope: [], maxAttempts: 3 }, { actor: actor("lead"), now: T0 });
  if (!out.ok) throw new Error("create");
  return out.record;
}

function claimed(by: string, min: number, ttl = 30 * 60_000, base = fresh()): { task: Task; event: HandoffEvent } {
  const out = claimTask(base, { actor: actor(by), now: at(min) }, ttl);
  if (!out.ok) throw new Error("claim");
  return { task: out.record, event: out.steps.at(-1)!.event };
}

test("a claim replayed on a task another clone claimed first is refused, naming the holder", () => {
  const mine = claimed("alice", 2);
  const theirs = claimed("bob", 1).task;
  const out = replayTaskEvent(theirs, mine.event, mine.task);
  assert.is(out.ok, false);
  if (out.ok) return;
  assert.is(out.refusal.code, "held_by_other");
  assert.is(out.refusal.data?.holder, "bob");
});

test("a claim replayed on a task still free is granted with the next fence and the recorded ttl", () => {
  const mine = claimed("alice", 2, 90_000);
  const out = replayTaskEvent(fresh(), mine.event, mine.task);
  assert.ok(out.ok);
  if (!out.ok) return;
  assert.is(out.record.claim?.agent, "alice");
  assert.is(out.record.claim?.fence, 1);
  assert.is(out.record.claim?.ttl_ms, 90_000);
});

test("a renew by an agent whose lease was released elsewhere no longer applies", () => {
  const held = claimed("alice", 1);
  const renewEvent: HandoffEvent = { ...held.event, type: "renewed", at: at(5).toISOString() };
  const released = releaseTask(held.task, { actor: actor("alice"), now: at(3) });
  if (!released.ok) throw new Error("release");
  const out = replayTaskEvent(released.record, renewEvent, held.task);
  assert.is(out.ok, false);
  if (!out.ok) assert.is(out.refusal.code, "not_holder");
});

test("replay never moves time backwards, and derived expiry events are skipped", () => {
  const later = claimed("bob", 20).task; // updated at minute 20
  const mine = claimed("alice", 5);
  const rel = releaseTask(later, { actor: actor("bob"), now: at(21) });
  if (!rel.ok) throw new Error("release");
  const out = replayTaskEvent(rel.record, mine.event, mine.task);
  assert.ok(out.ok);
  if (out.ok) assert.ok(Date.parse(out.record.updated_at) >= Date.parse(rel.record.updated_at));
  const expired = { ...mine.event, type: "expired" as const };
  assert.ok(isDerivedEvent(expired, null, null));
  // The expiry that used up the last attempt fails the task by itself; with attempts left, a
  // `failed` at the same instant is someone's explicit fail after its own settle.
  const usedUp: Task = { ...mine.task, status: "todo", claim: null, attempts: mine.task.max_attempts };
  assert.ok(isDerivedEvent({ ...mine.event, type: "failed" }, expired, usedUp));
  assert.not.ok(isDerivedEvent({ ...mine.event, type: "failed" }, expired, { ...usedUp, attempts: usedUp.max_attempts - 1 }));
  assert.not.ok(isDerivedEvent({ ...mine.event, type: "failed", at: at(99).toISOString() }, expired, usedUp));
});

test("fencing: the holder passes; another holder, an expired lease and a stale fence are refused", () => {
  const { task } = claimed("alice", 0, 10 * 60_000);
  assert.is(fenceRefusal(task, actor("alice"), at(1)), null);
  assert.is(fenceRefusal(task, actor("alice"), at(1), 1), null);
  const other = fenceRefusal(task, actor("bob"), at(1));
  assert.is(other?.code, "held_by_other");
  assert.match(other!.message, /held by alice/);
  assert.match(fenceRefusal(task, actor("alice"), at(11))!.message, /expired/);
  assert.match(fenceRefusal(task, actor("alice"), at(1), 0)!.message, /fence 0 .*stale.*fence 1/);
});

test("porcelain push output: each ref's status, rejections included", () => {
  const out = [
    "To ../r.git",
    "!\tabc:refs/handoff/tasks/x\t[rejected] (stale info)",
    "!\tabc:refs/handoff/tasks/y\t[rejected] (atomic push failed)",
    "*\tabc:refs/handoff/tasks/z\t[new reference]",
    "-\t:refs/handoff/tasks/old\t[deleted]",
    " \tabc:refs/handoff/archive\t1234..5678",
    "Done",
  ].join("\n");
  const s = parsePorcelain(out).status;
  assert.equal(Object.fromEntries(s), {
    "refs/handoff/tasks/x": "stale",
    "refs/handoff/tasks/y": "stale",
    "refs/handoff/tasks/z": "ok",
    "refs/handoff/tasks/old": "ok",
    "refs/handoff/archive": "ok",
  });
});

test.run();
