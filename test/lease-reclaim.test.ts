// `git handoff unlease --reclaim --reason TEXT`: force-releasing another agent's lease, allowed
// only when its task is finished or its holder gone, logged as lease_reclaimed.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, gitOut, handoffRefs, sh } from "./support/repo.ts";
import { storeClaim, storeDone, storeLease, storeSession, storeTasks } from "./support/seed.ts";
import { team } from "./support/team.ts";

test.after(cleanupTemp);

test("a lease whose task is finished, or whose holder ended its session, is force-released with a reason; a lease in use is not", async () => {
  const t = team(["alice", "bob"]);
  const lead = (args: string[]) => t.as("lead", args);
  // The sessions, tasks, claims and leases: written in-process (support/seed.ts). fin's done keeps
  // its lease (the lease ref put back, as repo.ts keepingLeases does): a lease outliving its task.
  const as = (a: string) => ({ cwd: t.wt[a] ?? t.repo, agent: a });
  for (const a of ["alice", "bob"]) await storeSession(as(a), "work");
  await storeTasks(as("lead"), [
    { id: "fin", objective: "finished work" },
    { id: "live", objective: "ongoing work" },
  ]);
  await storeClaim(as("alice"), "fin");
  await storeLease(as("alice"), ["docs/a.md"], { task: "fin" });
  const leaseTip = gitOut(t.repo, "rev-parse", "refs/handoff/leases");
  await storeDone(as("alice"), "fin");
  sh("git", ["update-ref", "refs/handoff/leases", leaseTip], t.repo);
  await storeClaim(as("alice"), "live");
  await storeLease(as("alice"), ["src/b.ts"], { exclusive: true, task: "live" });
  await storeLease(as("bob"), ["notes.md"]);

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
