// Leases run out: lazy recovery by the next writer, attempts and max_attempts, forced reclaim,
// and readers that show expired claims as free without writing.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, handoffRefs, tempRepo, type CliResult } from "./support/repo.ts";
import { storeClaim, storeTasks, type Actor } from "./support/seed.ts";

test.after(cleanupTemp);

const T0 = "2026-11-29T10:00:00.000Z";
const MIN = 60_000;
const plus = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

function ok(r: CliResult): CliResult {
  assert.is(r.code, 0, `exit ${r.code}: ${r.stderr}`);
  return r;
}

function at(repo: string, agent: string, ms: number, args: string[]): CliResult {
  return cli(args, { cwd: repo, agent, env: { HANDOFF_NOW: plus(ms) } });
}

/** Who writes a setup record through the store (seed.ts), at T0 + `ms`, as `at` runs the verb. */
const by = (repo: string, agent: string, ms: number): Actor => ({ cwd: repo, agent, now: plus(ms) });

function story(repo: string, id: string): string[] {
  return gitOut(repo, "log", "--format=%an|%s", `refs/handoff/tasks/${id}`).split("\n");
}

test("an expired lease (--ttl 1s) is taken over; the same compare-and-swap records `expired` before `claimed`", async () => {
  const repo = tempRepo();
  gitOut(repo, "config", "core.logAllRefUpdates", "always"); // a reflog entry per ref update
  await storeTasks(by(repo, "lead", 0), [{ id: "s", objective: "short lease" }]);
  const first = ok(at(repo, "alice", 0, ["claim", "s", "--ttl", "1s", "--json"])).json;
  assert.is(first.claim.fence, 1);
  const updatesBefore = gitOut(repo, "reflog", "show", "--format=%H", "refs/handoff/tasks/s").split("\n").length;
  const taken = ok(at(repo, "bob", 1500, ["claim", "s", "--json"])).json;
  assert.is(taken.claim.agent, "bob");
  assert.is(taken.claim.fence, 2, "the fence goes up at every grant");
  assert.is(taken.attempts, 1);
  const log = story(repo, "s");
  assert.is(log.length, 4, log.join("\n"));
  assert.match(log[0]!, /^bob\|claimed s by bob \(fence 2/);
  assert.match(log[1]!, /^bob\|expired s: lease of alice ran out \(seen by bob\)$/);
  assert.match(log[2]!, /^alice\|claimed s by alice \(fence 1/);
  assert.match(log[3]!, /^lead\|created s/);
  const updatesAfter = gitOut(repo, "reflog", "show", "--format=%H", "refs/handoff/tasks/s").split("\n").length;
  assert.is(updatesAfter, updatesBefore + 1, "expired and claimed were one ref update");
  const ev = ok(cli(["events", "--task", "s", "--type", "expired", "--json"], { cwd: repo })).json;
  assert.is(ev.length, 1);
  assert.equal([ev[0].agent, ev[0].by, ev[0].fence], ["alice", "bob", 1]);
  // alice's stale work is refused: she no longer holds the task
  const stale = at(repo, "alice", 1600, ["done", "s"]);
  assert.is(stale.code, 3);
  assert.match(stale.stderr, /held by bob/);
});

test("attempts count expired grants; at the default max_attempts (3) the task becomes failed, with the reason recorded", async () => {
  const repo = tempRepo();
  await storeTasks(by(repo, "lead", 0), [{ id: "f", objective: "flaky" }]);
  ok(at(repo, "a1", 0, ["claim", "f", "--ttl", "1m"]));
  // a release does not count as an attempt
  ok(at(repo, "a1", 10_000, ["release", "f"]));
  ok(at(repo, "a1", 20_000, ["claim", "f", "--ttl", "1m"]));
  const t2 = ok(at(repo, "a2", 2 * MIN, ["claim", "f", "--ttl", "1m", "--json"])).json;
  assert.equal([t2.attempts, t2.claim.fence], [1, 3]);
  const t3 = ok(at(repo, "a3", 4 * MIN, ["claim", "f", "--ttl", "1m", "--json"])).json;
  assert.equal([t3.attempts, t3.claim.fence], [2, 4]);

  // third expiry: readers already see it failed, and write nothing
  const before = handoffRefs(repo);
  const seen = ok(at(repo, "x", 6 * MIN, ["task", "show", "f", "--json"])).json;
  assert.equal([seen.status, seen.attempts, seen.claim], ["failed", 3, null]);
  assert.match(seen.result.reason, /lease expired 3 times without completion \(max_attempts 3\)/);
  assert.is(handoffRefs(repo), before);

  // the next writer is refused (the task is final) but records expired + failed in the history
  const late = at(repo, "a4", 6 * MIN, ["claim", "f"]);
  assert.is(late.code, 3);
  assert.match(late.stderr, /task f is failed \(lease expired 3 times/);
  const log = story(repo, "f");
  assert.match(log[0]!, /^a4\|failed f: lease expired 3 times/);
  assert.match(log[1]!, /^a4\|expired f: lease of a3 ran out/);
  const stored = ok(at(repo, "x", 7 * MIN, ["tasks", "--status", "failed", "--json"])).json;
  assert.equal(stored.map((t: any) => t.id), ["f"]);
  // and only once: a further refused write changes nothing
  const after = handoffRefs(repo);
  assert.is(at(repo, "a5", 8 * MIN, ["claim", "f"]).code, 3);
  assert.is(handoffRefs(repo), after);
});

test("max_attempts from .handoff.yaml applies to tasks added under it", () => {
  const repo = tempRepo();
  writeFileSync(join(repo, ".handoff.yaml"), "version: 1\nmax_attempts: 1\nclaim_ttl: 5m\n");
  const t = ok(at(repo, "lead", 0, ["task", "add", "one", "shot", "--id", "o", "--json"])).json;
  assert.is(t.max_attempts, 1);
  const c = ok(at(repo, "a1", 0, ["claim", "o", "--json"])).json;
  assert.is(c.claim.expires_at, plus(5 * MIN), "claim_ttl from the config is the default lease");
  const r = at(repo, "a2", 6 * MIN, ["claim", "o", "--json"]);
  assert.is(r.code, 3);
  assert.is(r.json.error.code, "final_state");
  assert.match(r.json.error.message, /max_attempts 1/);
});

test("reclaim --reason force-releases another agent's live claim and logs the previous holder", async () => {
  const repo = tempRepo();
  await storeTasks(by(repo, "lead", 0), [{ id: "r", objective: "stuck" }]);
  await storeClaim(by(repo, "alice", 0), "r", { ttl: "2h" });
  const before = handoffRefs(repo);
  const noReason = at(repo, "bob", MIN, ["reclaim", "r"]);
  assert.is(noReason.code, 2);
  assert.match(noReason.stderr, /reclaim needs --reason/);
  assert.is(handoffRefs(repo), before);

  const rc = ok(at(repo, "bob", MIN, ["reclaim", "r", "--reason", "alice's session died", "--json"])).json;
  assert.equal([rc.status, rc.claim, rc.attempts], ["todo", null, 0]);
  const log = story(repo, "r");
  assert.is(log[0], "bob|reclaimed r from alice by bob: alice's session died");
  const ev = ok(at(repo, "bob", MIN, ["events", "--type", "reclaimed", "--json"])).json;
  assert.equal([ev[0].agent, ev[0].holder, ev[0].fence, ev[0].reason], ["bob", "alice", 1, "alice's session died"]);

  const again = ok(at(repo, "bob", 2 * MIN, ["claim", "r", "--json"])).json;
  assert.is(again.claim.fence, 2);
  const gone = at(repo, "alice", 3 * MIN, ["done", "r"]);
  assert.is(gone.code, 3);
  assert.match(gone.stderr, /held by bob/);

  await storeTasks(by(repo, "lead", 0), [{ id: "free", objective: "free" }]);
  const nothing = at(repo, "bob", 3 * MIN, ["reclaim", "free", "--reason", "x"]);
  assert.is(nothing.code, 3);
  assert.match(nothing.stderr, /not claimed: nothing to reclaim/);
});

test("reads show an expired claim as free and write nothing", async () => {
  const repo = tempRepo();
  await storeTasks(by(repo, "lead", 0), [{ id: "e", objective: "lapsed" }, { id: "l", objective: "live" }]);
  await storeClaim(by(repo, "alice", 0), "e", { ttl: "1m" });
  await storeClaim(by(repo, "alice", 0), "l", { ttl: "1h", overCapacity: true });
  const before = handoffRefs(repo);
  const show = ok(at(repo, "bob", 2 * MIN, ["task", "show", "e", "--json"])).json;
  assert.equal([show.status, show.claim, show.attempts], ["todo", null, 1]);
  // it changed when the claim ran out: every look says so, whenever it looks
  const later = ok(at(repo, "bob", 5 * MIN, ["task", "show", "e", "--json"])).json;
  const expiredAt = new Date(Date.parse(T0) + MIN).toISOString();
  assert.equal([show.updated_at, later.updated_at], [expiredAt, expiredAt]);
  const list = ok(at(repo, "bob", 2 * MIN, ["tasks", "--status", "todo", "--json"])).json;
  assert.equal(list.map((t: any) => t.id), ["e"]);
  const st = ok(at(repo, "bob", 2 * MIN, ["status", "--json"])).json;
  assert.equal(st.counts, { todo: 1, claimed: 1, done: 0, failed: 0, cancelled: 0, review: 0 });
  assert.equal(st.expired.map((t: any) => [t.task, t.agent]), [["e", "alice"]]);
  assert.equal(st.holders.map((h: any) => h.agent), ["alice"]);
  assert.equal(st.holders[0].tasks.map((t: any) => t.task), ["l"]);
  const text = ok(at(repo, "bob", 2 * MIN, ["status"])).stdout;
  assert.match(text, /expired \(free to claim\)\n {2}e\s+alice lease ran out 60s ago/);
  ok(at(repo, "bob", 2 * MIN, ["events", "--json"]));
  assert.is(handoffRefs(repo), before, "reads wrote nothing");
  // the holder whose lease ran out can no longer renew it
  const renew = at(repo, "alice", 2 * MIN, ["renew", "e"]);
  assert.is(renew.code, 3);
  assert.match(renew.stderr, /alice does not hold it/);
});

test.run();
