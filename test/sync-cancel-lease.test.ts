// A task cancelled in one clone while its holder renewed it in another: after both sync, the task
// is cancelled and its exclusive scope lease is gone everywhere, whichever clone synced first.
// Before, the renewal's lease came back (or stayed) for its new TTL and turned everyone away.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";
import { storeClaim, storeSync, storeTasks, type Actor } from "./support/seed.ts";

test.after(cleanupTemp);

const T0 = Date.parse("2030-01-01T10:00:00.000Z");
const at = (seconds: number) => ({ HANDOFF_NOW: new Date(T0 + seconds * 1000).toISOString() });

function project() {
  const bare = serveRoot().bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  return { bare, a: cloneOf(bare), b: cloneOf(bare) };
}

const run = (args: string[], cwd: string, agent: string, seconds: number) => cli(args, { cwd, agent, env: at(seconds) });
const ok = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};

/** alice holds T in clone A (its scope leased exclusively); B has seen the claim. */
async function held(a: string, b: string): Promise<void> {
  const by = (cwd: string, agent: string, seconds: number): Actor => ({ cwd, agent, now: at(seconds).HANDOFF_NOW });
  await storeTasks(by(a, "lead", 0), [{ id: "T", objective: "t", scope: ["src/a/**"], exclusive: true }]);
  await storeSync(by(a, "lead", 1));
  await storeClaim(by(a, "alice", 2), "T", { ttl: "10m" });
  await storeSync(by(b, "lead", 3));
}

function settledWithoutLease(bare: string, a: string, b: string, seconds: number): void {
  for (const clone of [a, b]) {
    assert.is(ok(run(["task", "show", "T", "--json"], clone, "lead", seconds)).json.status, "cancelled");
    assert.equal(ok(run(["leases", "--json"], clone, "lead", seconds)).json, [], "no lease outlives the cancelled task");
    const denied = run(["check", "src/a/x.ts", "--json"], clone, "bob", seconds);
    assert.is(denied.code, 0, `bob may edit src/a/ again: ${denied.stdout}`);
    const doctor = run(["doctor", "--json"], clone, "lead", seconds).json;
    assert.is(doctor.checks.find((c: any) => c.name === "leases").status, "ok");
  }
  assert.equal(gitOut(a, "rev-parse", "refs/handoff/leases"), gitOut(bare, "rev-parse", "refs/handoff/leases"));
  assert.equal(gitOut(b, "rev-parse", "refs/handoff/leases"), gitOut(bare, "rev-parse", "refs/handoff/leases"));
}

test("cancel synced first: the holder's later renewal does not bring the lease back", async () => {
  const { bare, a, b } = project();
  await held(a, b);
  ok(run(["cancel", "T", "--reason", "stop"], b, "lead", 10));
  ok(run(["sync"], b, "lead", 11));
  ok(run(["renew", "T", "--ttl", "1h"], a, "alice", 20)); // A has not seen the cancel
  const s = ok(run(["sync", "--json"], a, "alice", 21)).json;
  // The renewal no longer applies: said once, for the task.
  assert.equal(s.conflicts.map((c: any) => `${c.ref} ${c.event.type} ${c.code}`), ["refs/handoff/tasks/T renewed final_state"]);
  ok(run(["sync"], b, "lead", 22));
  settledWithoutLease(bare, a, b, 30);
});

test("renewal synced first: the creator's cancel, replayed on it, ends the renewed lease", async () => {
  const { bare, a, b } = project();
  await held(a, b);
  ok(run(["cancel", "T", "--reason", "stop"], b, "lead", 10));
  ok(run(["renew", "T", "--ttl", "1h"], a, "alice", 20));
  ok(run(["sync"], a, "alice", 21));
  const s = ok(run(["sync", "--json"], b, "lead", 22)).json;
  assert.is(s.conflicts.length, 0, JSON.stringify(s.conflicts));
  ok(run(["sync"], a, "alice", 23));
  settledWithoutLease(bare, a, b, 30);
});

test.run();
