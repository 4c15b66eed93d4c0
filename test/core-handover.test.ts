// The pure parts of handing tasks over: who may take an addressed task, who may cancel a held one,
// which file names travel, and how the output is cut and read.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { addressRefusal } from "../src/core/address.ts";
import type { Actor } from "../src/core/identity.ts";
import { Task } from "../src/core/task.ts";
import { flatNameProblem, MAX_OUTPUT_BYTES, outputTail, reportedFailure } from "../src/core/task-files.ts";
import { cancelTask, claimTask, createTask, type OpContext } from "../src/core/task-ops.ts";

const T0 = Date.parse("2026-11-29T10:00:00.000Z");
const actor = (agent: string): Actor => ({ agent, worktree: "/w", branch: "main", scope: "primary" });
const ctx = (agent: string, ms = 0): OpContext => ({ actor: actor(agent), now: new Date(T0 + ms) });

function created(to: Task["to"] = null): Task {
  const out = createTask({ id: "t1", objective: "x", priority: 0, scope: [], maxAttempts: 3, to }, ctx("alice"));
  if (!out.ok) throw new Error(out.refusal.message);
  assert.ok(Task.safeParse(out.record).success);
  return out.record;
}

test("the creator may cancel a task a worker holds; nobody else may", () => {
  const c = claimTask(created(), ctx("codex@m2"), 60_000);
  if (!c.ok) throw new Error(c.refusal.message);
  const bob = cancelTask(c.record, ctx("bob", 1000), "mine now");
  assert.is(bob.ok, false);
  assert.is(!bob.ok && bob.refusal.code, "held_by_other");
  const alice = cancelTask(c.record, ctx("alice", 1000), "no longer needed");
  assert.is(alice.ok && alice.record.status, "cancelled");
  assert.is(alice.ok && alice.steps[0]!.event.fence, 1);
});

test("an addressed task records its address; the refusal names it and the caller", () => {
  const t = created({ kind: "codex", machine: "m2" });
  assert.equal(t.to, { kind: "codex", machine: "m2" });
  const r = addressRefusal(t, { agent: "claude@m2", machine: "m2" });
  assert.is(r?.code, "addressed_elsewhere");
  assert.match(r!.message, "task t1 is addressed to codex@m2; claude@m2 on m2 does not match");
  assert.is(addressRefusal(t, { agent: "codex@x", machine: "m2" }), null);
  assert.equal(created().to, undefined, "no address: the field is left out");
});

test("only flat names travel", () => {
  for (const ok of ["a.txt", "report", "x..y", "名前.md"]) assert.is(flatNameProblem(ok), null, ok);
  for (const [bad, why] of [["", "empty"], ["a/b", "path"], ["a\\b", "path"], [".env", "dotfile"], ["..", "dotfile"], ["a\nb", "control"], ["x".repeat(256), "longer"]]) {
    assert.match(flatNameProblem(bad!) ?? "", why!, JSON.stringify(bad));
  }
});

test("the output keeps its tail with a marker; FAILED: on the first line is a failure", () => {
  assert.equal(outputTail(Buffer.from("short")), { output: "short", cut: 0 });
  const long = Buffer.concat([Buffer.from("head\n"), Buffer.alloc(MAX_OUTPUT_BYTES, "x"), Buffer.from("\nend")]);
  const t = outputTail(long);
  assert.is(t.cut, long.length - MAX_OUTPUT_BYTES);
  assert.match(t.output, /^\[\.\.\. \d+ bytes of output cut \.\.\.\]\n/);
  assert.ok(t.output.endsWith("\nend"));
  // Bytes let go before the tail (a command's stdout is kept bounded while it runs) count as cut.
  assert.equal(outputTail(Buffer.from("tail"), 7), { output: "[... 7 bytes of output cut ...]\ntail", cut: 7 });
  assert.is(outputTail(long, 1000).cut, long.length - MAX_OUTPUT_BYTES + 1000);
  assert.is(reportedFailure("FAILED: no disk"), "no disk");
  assert.is(reportedFailure("FAILED:"), "the agent reported failure");
  assert.is(reportedFailure("all good, nothing FAILED: here"), null);
});

test.run();
