// A lease's life follows its task's: every way a task stops being worked on ends every lease taken
// for it (the claim's scope and `lease --task`), in the same transaction. Two agents in linked
// worktrees; the clock is scripted.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, gitOut } from "./support/repo.ts";
import { storeClaim, storeLease, storeTasks } from "./support/seed.ts";
import { MIN, team, type Team } from "./support/team.ts";

test.after(cleanupTemp);

const T0 = Date.parse("2026-06-01T10:00:00.000Z");
const at = (ms: number) => ({ HANDOFF_NOW: new Date(T0 + ms).toISOString() });

/** alice claims task `w` (scope src/w/**, exclusive) and leases src/extra.ts for it too. */
async function started(opts: { verify?: boolean; config?: string } = {}): Promise<Team> {
  const t = team(["alice", "bob"]);
  if (opts.config) {
    writeFileSync(join(t.repo, ".handoff.yaml"), opts.config);
    gitOut(t.repo, "add", ".handoff.yaml");
    gitOut(t.repo, "commit", "-q", "-m", "policy");
    for (const a of ["alice", "bob"]) gitOut(t.wt[a]!, "merge", "-q", "main");
  }
  const now = at(0).HANDOFF_NOW;
  await storeTasks({ cwd: t.repo, agent: "lead", now }, [{ id: "w", objective: "work", scope: ["src/w/**"], exclusive: true, ...(opts.verify ? { verify: "true" } : {}) }]);
  const alice = { cwd: t.wt.alice!, agent: "alice", now };
  await storeClaim(alice, "w");
  await storeLease(alice, ["src/extra.ts"], { exclusive: true, task: "w" });
  assert.is(t.as("bob", ["check", "src/w/a.ts"], at(0)).code, 3, "while alice works on w, bob is denied");
  return t;
}

function assertNothingOf(t: Team, task: string, when: number, what: string, stored = true): void {
  const leases = t.as("lead", ["leases", "--json"], at(when));
  assert.is(leases.code, 0, leases.stderr);
  const left = (leases.json as { task: string | null; pattern: string }[]).filter((l) => l.task === task);
  assert.equal(left, [], `${what}: no lease of ${task} survives`);
  // Expiry is lazy: until the next writer, an expired lease may still be stored (and is free).
  if (stored) assert.not.match(gitOut(t.repo, "show", "refs/handoff/leases:leases.json"), `"task":"${task}"`, `${what}: the stored lease set holds nothing of ${task}`);
  const check = t.as("bob", ["check", "src/w/a.ts", "src/extra.ts"], at(when));
  assert.is(check.code, 0, `${what}: bob may edit: ${check.stdout}`);
}

const transitions: [string, (t: Team) => number][] = [
  ["done", (t) => (t.as("alice", ["done", "w"], at(MIN)).code === 0 ? MIN : -1)],
  ["release", (t) => (t.as("alice", ["release", "w"], at(MIN)).code === 0 ? MIN : -1)],
  ["fail", (t) => (t.as("alice", ["fail", "w", "--reason", "no"], at(MIN)).code === 0 ? MIN : -1)],
  ["cancel", (t) => (t.as("alice", ["cancel", "w", "--reason", "no"], at(MIN)).code === 0 ? MIN : -1)],
  ["reclaim", (t) => (t.as("bob", ["reclaim", "w", "--reason", "stuck"], at(MIN)).code === 0 ? MIN : -1)],
];

for (const [name, run] of transitions) {
  test(`${name} ends every lease of the task`, async () => {
    const t = await started();
    const when = run(t);
    assert.ok(when >= 0, `${name} succeeded`);
    assertNothingOf(t, "w", when, name);
  });
}

test("review submit, reject and accept: the leases end when the task goes to review, and stay ended", async () => {
  const t = await started({ verify: true });
  const submit = t.as("alice", ["done", "w"], at(MIN));
  assert.is(submit.code, 0, submit.stderr);
  assertNothingOf(t, "w", MIN, "review submit");
  const reject = t.as("lead", ["review", "reject", "w", "--reason", "again"], at(2 * MIN));
  assert.is(reject.code, 0, reject.stderr);
  assertNothingOf(t, "w", 2 * MIN, "review reject");
  assert.is(t.as("alice", ["claim", "w"], at(3 * MIN)).code, 0);
  assert.is(t.as("alice", ["done", "w"], at(4 * MIN)).code, 0);
  const accept = t.as("lead", ["review", "accept", "w"], at(5 * MIN));
  assert.is(accept.code, 0, accept.stderr);
  assertNothingOf(t, "w", 5 * MIN, "review accept");
  assert.is(t.as("lead", ["leases", "--json"], at(5 * MIN)).json.length, 0, "after accept nobody holds anything");
});

test("expiry: the holder's other lease writes do not keep the task's leases alive past the claim", async () => {
  const t = await started();
  // At 20 minutes alice leases an unrelated file: that renews her free-standing leases only.
  assert.is(t.as("alice", ["lease", "notes.md"], at(20 * MIN)).code, 0);
  const mine = t.as("lead", ["leases", "--json"], at(20 * MIN)).json as { pattern: string; task: string | null; expires_at: string }[];
  assert.is(mine.find((l) => l.pattern === "src/w/**")!.expires_at, new Date(T0 + 30 * MIN).toISOString(), "the scope lease still ends with the claim");
  assertNothingOf(t, "w", 31 * MIN, "expiry", false);
  // The next writer on the task records the expiry and sweeps the leases in the same transaction.
  assert.is(t.as("bob", ["claim", "w"], at(32 * MIN)).code, 0);
  const after = t.as("lead", ["leases", "--json"], at(32 * MIN)).json as { agent: string; task: string | null }[];
  assert.equal(after.filter((l) => l.task === "w").map((l) => l.agent), ["bob"], "only the new holder's scope lease");
});

test("renew extends the claim's scope leases and its lease --task leases with it", async () => {
  const t = await started();
  assert.is(t.as("alice", ["renew", "w"], at(10 * MIN)).code, 0);
  const leases = t.as("lead", ["leases", "--json"], at(10 * MIN)).json as { pattern: string; expires_at: string }[];
  const end = new Date(T0 + 40 * MIN).toISOString();
  assert.equal(leases.map((l) => [l.pattern, l.expires_at]), [["src/extra.ts", end], ["src/w/**", end]]);
});

test("gc of a silent agent ends the leases of its tasks and its free-standing leases", async () => {
  const t = await started({ config: "gc_after: 1h\n" });
  assert.is(t.as("alice", ["session", "start", "--objective", "w"], at(0)).code, 0);
  assert.is(t.as("alice", ["lease", "docs/**", "--ttl", "5h"], at(0)).code, 0);
  assert.is(t.as("alice", ["renew", "w", "--ttl", "3h"], at(MIN)).code, 0);
  assert.is(t.as("bob", ["check", "src/w/a.ts"], at(2 * 60 * MIN)).code, 3, "the claim is still live at 2h");
  const gc = t.as("bob", ["gc"], at(2 * 60 * MIN));
  assert.is(gc.code, 0, gc.stderr);
  assert.match(gc.stdout, /removed alice/);
  assertNothingOf(t, "w", 2 * 60 * MIN, "gc");
  assert.equal(t.as("lead", ["leases", "--json"], at(2 * 60 * MIN)).json, [], "its free-standing lease went too");
});

test.run();
