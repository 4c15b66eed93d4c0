// A task's reclaim record (`reclaimed`: who a reclaim took it from, who may not finish it until a
// new grant) is a rule, not a note: a write that is not a grant and drops it (an older build that
// does not know the field rewrites the record without it) is refused on receive.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { amendRecord, eventMessage } from "./support/forge.ts";
import { cleanupTemp, cli, succeeded } from "./support/repo.ts";
import { cloneOf, emptyRemote } from "./support/servers.ts";

test.after(cleanupTemp);

const ok = succeeded;

test("a write that drops a task's reclaim record is refused on receive; the reclaimed agent still may not finish it", () => {
  const bare = emptyRemote();
  const a = cloneOf(bare);
  const b = cloneOf(bare);
  const at = (minutes: number) => ({ HANDOFF_NOW: new Date(Date.parse("2026-12-06T10:00:00Z") + minutes * 60_000).toISOString() });
  ok(cli(["task", "add", "parser", "--id", "parser", "--push"], { cwd: a, agent: "lead", env: at(0) }));
  ok(cli(["claim", "parser", "--ttl", "5m"], { cwd: a, agent: "alice", env: at(1) }));
  ok(cli(["reclaim", "parser", "--reason", "alice went quiet"], { cwd: a, agent: "bob", env: at(10) }));
  ok(cli(["sync"], { cwd: a, agent: "bob", env: at(10) }));
  ok(cli(["sync"], { cwd: b, agent: "carol", env: at(10) }));
  assert.is(cli(["task", "show", "parser", "--json"], { cwd: b, agent: "carol", env: at(10) }).json.reclaimed?.agent, "alice");
  // As an older build's `depend` wrote it: the record without the field, under an event it knows.
  const event = { type: "depended", task: "parser", agent: "alice", at: at(11).HANDOFF_NOW, scope: "primary", worktree: null, branch: null };
  amendRecord(bare, "refs/handoff/tasks/parser", (t) => delete t.reclaimed, { author: "alice", message: eventMessage(event) });
  const s = cli(["sync", "--json"], { cwd: b, agent: "carol", env: at(11) });
  assert.is(s.code, 3, "a sync that keeps a ref back says so by its status");
  const q = (s.json.quarantined as { ref: string; reason: string }[]).find((x) => x.ref === "refs/handoff/tasks/parser");
  assert.ok(q, JSON.stringify(s.json.quarantined));
  assert.match(q!.reason, /depended by alice dropped the record that bob reclaimed parser from alice/);
  const done = cli(["done", "parser"], { cwd: b, agent: "alice", env: at(12) });
  assert.is(done.code, 3, "alice may not finish what was taken from her");
});

test.run();
