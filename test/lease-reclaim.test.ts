// `git handoff unlease --reclaim --reason TEXT`: force-releasing another agent's lease, allowed
// only when its task is finished or its holder gone, logged as lease_reclaimed.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, gitOut, handoffRefs, keepingLeases } from "./support/repo.ts";
import { team } from "./support/team.ts";

test.after(cleanupTemp);

test("a lease whose task is finished, or whose holder ended its session, is force-released with a reason; a lease in use is not", () => {
  const t = team(["alice", "bob"]);
  const lead = (args: string[]) => t.as("lead", args);
  for (const a of ["alice", "bob"]) assert.is(t.as(a, ["session", "start", "--objective", "work"]).code, 0);
  assert.is(lead(["task", "add", "--id", "fin", "finished work"]).code, 0);
  assert.is(lead(["task", "add", "--id", "live", "ongoing work"]).code, 0);
  assert.is(t.as("alice", ["claim", "fin"]).code, 0);
  assert.is(t.as("alice", ["lease", "--task", "fin", "docs/a.md"]).code, 0);
  keepingLeases(t.repo, () => assert.is(t.as("alice", ["done", "fin", "--no-verify"]).code, 0));
  assert.is(t.as("alice", ["claim", "live"]).code, 0);
  assert.is(t.as("alice", ["lease", "--exclusive", "--task", "live", "src/b.ts"]).code, 0);
  assert.is(t.as("bob", ["lease", "notes.md"]).code, 0);

  const before = handoffRefs(t.repo);
  const noReason = lead(["unlease", "--reclaim", "docs/a.md"]);
  assert.is(noReason.code, 2);
  assert.match(noReason.stderr, /needs --reason/);
  const inUse = lead(["unlease", "--reclaim", "src/b.ts", "--reason", "want it", "--json"]);
  assert.is(inUse.code, 3);
  assert.is(inUse.json.error.code, "wrong_state");
  assert.match(inUse.json.error.message, /held by alice for task live is still in use/);
  const missing = lead(["unlease", "--reclaim", "nothing.md", "--reason", "r"]);
  assert.is(missing.code, 4);
  const wrongHolder = lead(["unlease", "--reclaim", "docs/a.md", "--holder", "bob", "--reason", "r"]);
  assert.is(wrongHolder.code, 4);
  assert.is(handoffRefs(t.repo), before, "refusals leave every ref as it was");

  const r = lead(["unlease", "--reclaim", "docs/a.md", "--reason", "fin is done", "--json"]);
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.json.released.map((l: { pattern: string; agent: string }) => [l.pattern, l.agent]), [["docs/a.md", "alice"]]);

  // bob is gone once his session ends: his lease outlived him.
  assert.is(t.as("bob", ["session", "end"]).code, 0);
  const gone = lead(["unlease", "--reclaim", "notes.md", "--reason", "bob left"]);
  assert.is(gone.code, 0, gone.stderr);
  assert.match(gone.stdout, /reclaimed notes\.md from bob/);

  const leases = lead(["leases", "--json"]).json.map((l: { pattern: string }) => l.pattern);
  assert.equal(leases, ["src/b.ts"]);
  const ev = lead(["events", "--type", "lease_reclaimed", "--json"]).json;
  assert.equal(ev.map((e: { agent: string; holder: string; paths: string[]; reason: string }) => [e.agent, e.holder, e.paths, e.reason]), [
    ["lead", "alice", ["docs/a.md"], "fin is done (task_finished)"],
    ["lead", "bob", ["notes.md"], "bob left (holder_gone)"],
  ]);
  assert.match(gitOut(t.repo, "log", "-1", "--format=%s", "refs/handoff/leases"), /^lease_reclaimed notes\.md from bob by lead: bob left/);
});

test.run();
