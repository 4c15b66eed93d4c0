// doctor and doctor --repair on a task lease whose task's claim ran out but is still stored as
// claimed (its holder's older build leased for the task after its own claim expired, so the lease
// outlives the claim; `lease --task` now refuses that): both judge by the task as every view and
// write settles it. Without a sync remote the claim is over at its expiry; through one, another
// agent's expired claim stands for the takeover grace (max_clock_skew, 60 s here) and nothing is
// reported or removed until the grace has passed. Whatever doctor reports of it, --repair removes,
// and doctor then passes.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, leaseAsOlderBuild, tempRepo } from "./support/repo.ts";
import { storeClaim, storeLease, storeSync, storeTasks } from "./support/seed.ts";
import { twoClones } from "./support/servers.ts";

test.after(cleanupTemp);

const T = Date.parse("2026-11-30T09:00:00.000Z");
const at = (ms: number) => ({ HANDOFF_NOW: new Date(ms).toISOString() });
/** 30 s past the one-minute claim's expiry: inside the 60 s grace. */
const INSIDE = T + 90_000;
/** 10 s after the grace ends. */
const PAST = T + 130_000;

type CheckJson = { name: string; status: string; detail: string; fix?: string };
function leasesCheck(repo: string, ms: number, repair = false): CheckJson {
  const r = cli(["doctor", "--json", ...(repair ? ["--repair"] : [])], { cwd: repo, agent: "lead", env: at(ms) });
  return (r.json.checks as CheckJson[]).find((c) => c.name === "leases")!;
}
const leaseRows = (repo: string, ms: number) => (cli(["leases", "--json"], { cwd: repo, agent: "lead", env: at(ms) }).json as { agent: string; pattern: string; task: string | null }[]).map((l) => `${l.agent} ${l.pattern} ${l.task}`).sort();
const LAPSED = /alice's lease on src\/z\.ts serves task x, whose claim by alice expired at 2026-11-30T09:01:00\.000Z/;

/**
 * In `repo`: lead adds x (scope src/x/**) and y; alice claims x for one minute from T, carol claims
 * y for an hour; alice's older build leases src/z.ts for x for an hour at `leaseAt`, after her own
 * claim ran out (for her it is free at once), and carol leases src/y.ts for y. `more`: options for
 * every command (--push); the older build's lease then goes out with alice's next sync.
 */
async function lapsedClaim(repo: string, leaseAt: number, more: string[] = []): Promise<void> {
  // The tasks, claims, carol's lease and the sync: written in-process (support/seed.ts), --push as `more` says.
  const as = (agent: string, ms: number) => ({ cwd: repo, agent, now: at(ms).HANDOFF_NOW, ...(more.includes("--push") ? { push: true } : {}) });
  await storeTasks(as("lead", T), [
    { id: "x", objective: "x", scope: ["src/x/**"] },
    { id: "y", objective: "y" },
  ]);
  await storeClaim(as("alice", T), "x", { ttl: "1m" });
  await storeClaim(as("carol", T), "y", { ttl: "1h" });
  const refused = cli(["lease", "src/z.ts", "--task", "x", "--ttl", "1h", ...more], { cwd: repo, agent: "alice", env: at(leaseAt) });
  assert.is(refused.code, 3, "this build refuses to lease for a claim of the caller's that ran out");
  await leaseAsOlderBuild(repo, "alice", { pattern: "src/z.ts", task: "x", ttlMs: 3_600_000 }, at(leaseAt));
  if (more.length) await storeSync({ cwd: repo, agent: "alice", now: at(leaseAt).HANDOFF_NOW });
  await storeLease(as("carol", leaseAt), ["src/y.ts"], { task: "y" });
}

test("no remote: past its expiry alice's claim holds x no more; doctor reports her lease for x, --repair removes it (and only it), doctor passes", async () => {
  const repo = tempRepo();
  await lapsedClaim(repo, T + 3 * 60_000);
  const now = T + 4 * 60_000;
  const taskTip = gitOut(repo, "rev-parse", "refs/handoff/tasks/x");
  assert.match(gitOut(repo, "show", "refs/handoff/tasks/x:task.json"), /"status": *"claimed"/, "x is still stored as alice's");
  const bad = leasesCheck(repo, now);
  assert.is(bad.status, "fail");
  assert.match(bad.detail, /^1 lease\(s\) outlived their work: /);
  assert.match(bad.detail, LAPSED);
  assert.is(bad.fix, "git handoff unlease src/z.ts --agent alice");
  const fixed = leasesCheck(repo, now, true);
  assert.is(fixed.status, "ok", fixed.detail);
  assert.match(fixed.detail, /^removed 1 task lease\(s\) that outlived their work: alice's lease on src\/z\.ts \(task x\)\./);
  assert.equal(leaseRows(repo, now), ["carol src/y.ts y"]);
  assert.match(gitOut(repo, "log", "-1", "--format=%s", "refs/handoff/leases"), /^unleased src\/z\.ts .*by lead/);
  assert.is(gitOut(repo, "rev-parse", "refs/handoff/tasks/x"), taskTip, "the repair wrote no task: the next writer records the expiry");
  assert.is(leasesCheck(repo, now).status, "ok");
});

/** Alice's lapsed claim written in clone b, pushed and synced into clone a at `syncAt`, where lead runs doctor. */
let made: { a: string } | null = null;
async function throughRemote(): Promise<{ a: string }> {
  if (made) return made;
  const { a, b } = twoClones();
  // alice leases 10 s after her claim ran out, inside the grace others give it
  await lapsedClaim(b, T + 70_000, ["--push"]);
  await storeSync({ cwd: a, agent: "lead", now: at(INSIDE).HANDOFF_NOW });
  assert.equal(leaseRows(a, INSIDE), ["alice src/z.ts x", "carol src/y.ts y"], "a holds b's leases");
  return (made = { a });
}

test("through a remote, inside the takeover grace: alice's claim still stands, doctor reports nothing and --repair removes nothing", async () => {
  const { a } = await throughRemote();
  const leaseTip = gitOut(a, "rev-parse", "refs/handoff/leases");
  const seen = leasesCheck(a, INSIDE);
  assert.is(seen.status, "ok", seen.detail);
  const repaired = leasesCheck(a, INSIDE, true);
  assert.is(repaired.status, "ok", repaired.detail);
  assert.not.match(repaired.detail, /removed/);
  assert.is(gitOut(a, "rev-parse", "refs/handoff/leases"), leaseTip, "the lease set is untouched");
  assert.equal(leaseRows(a, INSIDE), ["alice src/z.ts x", "carol src/y.ts y"]);
});

test("through a remote, past the takeover grace: doctor reports alice's lease for x, --repair removes it, doctor passes", async () => {
  const { a } = await throughRemote();
  const bad = leasesCheck(a, PAST);
  assert.is(bad.status, "fail");
  assert.match(bad.detail, LAPSED);
  const fixed = leasesCheck(a, PAST, true);
  assert.is(fixed.status, "ok", fixed.detail);
  assert.match(fixed.detail, /^removed 1 task lease\(s\) that outlived their work: alice's lease on src\/z\.ts \(task x\)\./);
  assert.equal(leaseRows(a, PAST), ["carol src/y.ts y"]);
  assert.is(leasesCheck(a, PAST).status, "ok");
});

test.run();
