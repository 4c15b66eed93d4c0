// A task whose claim ran out, failed in one clone while the remote's version moved on: the fail is
// written right after its own settle's `expired`, at the same instant, just as the automatic failure
// of a task's last attempt is. Sync must replay the explicit one and still skip the derived one.
import { writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { storeClaim, storeRenew, storeSync, storeTasks, type Actor } from "./support/seed.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";

test.after(cleanupTemp);

const T0 = Date.parse("2030-01-01T10:00:00.000Z");
const at = (seconds: number) => ({ HANDOFF_NOW: new Date(T0 + seconds * 1000).toISOString() });

function project(policy?: string) {
  const bare = serveRoot().bare("project");
  const seed = tempRepo();
  if (policy) {
    writeFileSync(`${seed}/.handoff.yaml`, policy);
    gitOut(seed, "add", ".handoff.yaml");
    gitOut(seed, "commit", "-q", "-m", "policy");
  }
  gitOut(seed, "push", "-q", bare, "main");
  return { bare, a: cloneOf(bare), b: cloneOf(bare) };
}

const run = (args: string[], cwd: string, agent: string, seconds: number) => cli(args, { cwd, agent, env: at(seconds) });
const ok = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};
const remoteTask = (bare: string, id: string) => JSON.parse(gitOut(bare, "show", `refs/handoff/tasks/${id}:task.json`));
const eventsOf = (cwd: string, seconds: number) =>
  ok(run(["events", "--task", "T", "--json"], cwd, "lead", seconds)).json.map((e: any) => `${e.type}:${e.by ?? e.agent}`);

/** `agent` in `cwd` at `seconds`: the setup's writes and syncs, in-process (support/seed.ts). */
const by = (cwd: string, agent: string, seconds: number): Actor => ({ cwd, agent, now: at(seconds).HANDOFF_NOW });

/** alice claims T for a minute in A, then renews it there: the remote's T moved after B last synced. */
async function claimedThenMoved(a: string, b: string): Promise<void> {
  await storeTasks(by(a, "lead", 0), [{ id: "T", objective: "t" }]);
  await storeClaim(by(a, "alice", 1), "T", { ttl: "1m" });
  await storeSync(by(a, "alice", 2));
  await storeSync(by(b, "bob", 3));
  await storeRenew(by(a, "alice", 10), "T"); // until +70 s
  await storeSync(by(a, "alice", 11));
}

test("an explicit fail of a task whose claim had run out is replayed at sync, not dropped as derived", async () => {
  const { bare, a, b } = project();
  await claimedThenMoved(a, b);
  assert.is(ok(run(["fail", "T", "--reason", "cannot be done", "--json"], b, "bob", 300)).json.status, "failed");
  const s = ok(run(["sync", "--json"], b, "bob", 301)).json;
  assert.equal(s.replayed, ["refs/handoff/tasks/T"]);
  assert.is(s.conflicts.length, 0);
  const t = remoteTask(bare, "T");
  assert.is(t.status, "failed");
  assert.is(t.result.reason, "cannot be done");
  assert.equal(eventsOf(b, 302), ["created:lead", "claimed:alice", "renewed:alice", "expired:bob", "failed:bob"]);
  // The other clone takes the replayed history as it is (receive checks the fail as an operation).
  ok(run(["sync"], a, "alice", 303));
  assert.is(ok(run(["task", "show", "T", "--json"], a, "alice", 304)).json.status, "failed");
  assert.equal(eventsOf(a, 304), eventsOf(b, 304));
});

test("an explicit fail of a task someone took over meanwhile becomes a conflict for its agent", async () => {
  const { bare, a, b } = project();
  await claimedThenMoved(a, b);
  await storeClaim(by(a, "carol", 200), "T"); // alice's claim ran out: carol takes T on the remote
  ok(run(["fail", "T", "--reason", "cannot be done"], b, "bob", 300));
  const s = ok(run(["sync", "--json"], b, "bob", 301)).json;
  assert.equal(s.conflicts.map((c: any) => `${c.agent} ${c.event.type} ${c.code} ${c.holder}`), ["bob failed held_by_other carol"]);
  const t = remoteTask(bare, "T");
  assert.is(t.status, "claimed");
  assert.is(t.claim.agent, "carol");
});

test("the automatic failure of a task's last attempt is still skipped at sync, with no conflict", async () => {
  const { bare, a, b } = project("max_attempts: 1\n");
  await claimedThenMoved(a, b);
  // bob's release is refused (the expiry used up the last attempt: T is failed), and the writer
  // records the expiry and the failure it brings, here only.
  const refused = run(["release", "T", "--json"], b, "bob", 300);
  assert.is(refused.code, 3, refused.stderr);
  assert.is(refused.json.error.code, "final_state");
  assert.equal(eventsOf(b, 300).slice(-2), ["expired:bob", "failed:bob"]);
  const s = ok(run(["sync", "--json"], b, "bob", 301)).json;
  assert.is(s.conflicts.length, 0, JSON.stringify(s.conflicts));
  // Not replayed as bob's own fail: the remote's T fails when its claim runs out, for every reader.
  assert.is(remoteTask(bare, "T").status, "claimed");
  ok(run(["sync"], a, "alice", 302));
  for (const clone of [a, b]) assert.is(ok(run(["task", "show", "T", "--json"], clone, "lead", 303)).json.status, "failed");
});

test.run();
