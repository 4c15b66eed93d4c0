// `status` shows who holds which files: holder, task, pattern, exclusive, expiry, and flags the
// leases that should not be there (task not held by them, holder gone), in text and --json.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, keepingLeases } from "./support/repo.ts";
import { MIN, team } from "./support/team.ts";

test.after(cleanupTemp);

const T0 = Date.parse("2026-06-01T10:00:00.000Z");
const at = (ms: number) => ({ HANDOFF_NOW: new Date(T0 + ms).toISOString() });

test("status has a file-lease section, with leases of unheld tasks and gone holders flagged", () => {
  const t = team(["alice", "bob"]);
  assert.is(t.as("lead", ["status", "--no-conflicts"], at(0)).stdout.includes("nobody holds a file lease"), true);
  assert.is(t.as("lead", ["task", "add", "work", "--id", "w", "--scope", "src/w/**", "--exclusive"], at(0)).code, 0);
  // A lease may come before its task (by sync): it stands on its own TTL, for a task nobody holds.
  assert.is(t.as("alice", ["lease", "src/later.ts", "--task", "later", "--ttl", "5h"], at(0)).code, 0);
  assert.is(t.as("lead", ["task", "add", "later", "--id", "later"], at(0)).code, 0);
  assert.is(t.as("lead", ["task", "add", "old", "--id", "old"], at(0)).code, 0);
  assert.is(t.as("alice", ["claim", "old", "--ttl", "5h"], at(0)).code, 0);
  assert.is(t.as("alice", ["lease", "src/old.ts", "--task", "old"], at(0)).code, 0);
  keepingLeases(t.repo, () => assert.is(t.as("alice", ["done", "old"], at(0)).code, 0));
  assert.is(t.as("alice", ["claim", "w", "--ttl", "5h"], at(0)).code, 0);
  assert.is(t.as("bob", ["session", "start", "--objective", "docs"], at(0)).code, 0);
  assert.is(t.as("bob", ["lease", "docs/**", "--ttl", "5h"], at(0)).code, 0);

  const s = t.as("lead", ["status", "--no-conflicts", "--json"], at(2 * 60 * MIN));
  assert.is(s.code, 0, s.stderr);
  const rows = s.json.leases.map((l: { agent: string; pattern: string; task: string | null; exclusive: boolean; flags: string[] }) => [l.agent, l.pattern, l.task, l.exclusive, l.flags]);
  assert.equal(rows, [
    ["alice", "src/later.ts", "later", false, ["task_not_held"]],
    ["alice", "src/old.ts", "old", false, ["task_finished"]],
    ["alice", "src/w/**", "w", true, []],
    ["bob", "docs/**", null, false, ["holder_gone"]],
  ]);
  assert.is(s.json.leases[2].expires_at, new Date(T0 + 5 * 60 * MIN).toISOString());

  const text = t.as("lead", ["status", "--no-conflicts"], at(2 * 60 * MIN)).stdout;
  assert.match(text, /file leases\n/);
  assert.match(text, /alice\s+src\/w\/\*\*\s+exclusive\s+task w\s+expires in 3h/);
  assert.match(text, /alice\s+src\/later\.ts\s+shared\s+task later\s+expires in 3h.*! its task is not held by it/);
  assert.match(text, /alice\s+src\/old\.ts\s+shared\s+task old.*! its task is finished/);
  assert.match(text, /bob\s+docs\/\*\*\s+shared\s+no task.*! its holder is gone/);
  assert.match(text, /policy: balanced, nothing committed on main: this worktree's file/);
});

test.run();
