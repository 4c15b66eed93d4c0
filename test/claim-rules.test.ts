// The smaller rules, each as a user meets them: capacity on claim (and a declared capacity),
// no self-review or self-ack unless the policy allows it, a rejection reaching its author, a true
// blocked-claim hint, `task list --status blocked`, `unlease` per path, `leases` saying things once.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, cliAsync, handoffRefs, seedTasks, tempRepo } from "./support/repo.ts";
import { commitFile, team, type Team } from "./support/team.ts";
import { storeClaim, storeLease, storeTasks, type Actor } from "./support/seed.ts";

test.after(cleanupTemp);

/** Where `t.as(agent, ...)` runs: the agent's worktree, else the main one. */
const actor = (t: Team, agent: string): Actor => ({ cwd: t.wt[agent] ?? t.repo, agent });

test("capacity: a second claim is refused (at_capacity, exit 3) unless --over-capacity or a declared capacity", async () => {
  const t = team(["alice"]);
  await storeTasks(actor(t, "lead"), ["a", "b", "c", "d"].map((id) => ({ id, objective: id })));
  await storeClaim(actor(t, "alice"), "a");
  assert.is(t.as("alice", ["claim", "a"]).code, 0, "claiming what you hold renews it: not a second task");
  const refs = handoffRefs(t.repo);
  const second = t.as("alice", ["claim", "b"]);
  assert.is(second.code, 3);
  assert.match(second.stderr, /alice already holds 1 task \(a\) and its capacity is 1/);
  assert.match(second.stderr, /--over-capacity/);
  assert.is(handoffRefs(t.repo), refs, "a refused claim changes nothing");
  assert.is(t.as("alice", ["claim", "--next"]).code, 3, "claim --next too");
  assert.is(t.as("alice", ["ready", "--claim"]).code, 3, "and ready --claim");
  assert.is(t.as("alice", ["claim", "b", "--over-capacity"]).code, 0);

  assert.is(t.as("alice", ["session", "start", "--objective", "worker", "--capacity", "3"]).code, 0);
  assert.is(t.as("alice", ["claim", "c"]).code, 0, "a declared capacity of 3 allows a third");
  assert.is(t.as("alice", ["claim", "d"]).code, 3);
  const agents = t.as("lead", ["agents", "--json"]).json;
  assert.equal(agents.agents[0].capacity, { claimed: 3, max: 3 });
  assert.is(t.as("alice", ["session", "start", "--objective", "x", "--capacity", "0"]).code, 2, "bad input is refused");
});

test("capacity: an agent's own expired claim counts for nothing, and claiming that task again is a new claim that counts", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, ["a", "b"].map((id) => ({ id, objective: id })));
  const now = Date.now();
  const at = (ms: number) => ({ HANDOFF_NOW: new Date(now + ms).toISOString() });
  await storeClaim({ cwd: repo, agent: "alice", now: at(0).HANDOFF_NOW }, "b", { ttl: "1m" });
  assert.is(cli(["claim", "a"], { cwd: repo, agent: "alice", env: at(2 * 60_000) }).code, 0, "b's claim ran out: alice holds nothing");
  const refs = handoffRefs(repo);
  const again = cli(["claim", "b", "--json"], { cwd: repo, agent: "alice", env: at(2 * 60_000) });
  assert.is(again.code, 3, "b again would be a second live claim");
  assert.is(again.json.error.code, "at_capacity");
  assert.is(handoffRefs(repo), refs);
  const over = cli(["claim", "b", "--over-capacity", "--json"], { cwd: repo, agent: "alice", env: at(2 * 60_000) });
  assert.is(over.code, 0, over.stderr);
  assert.is(over.json.claim.fence, 2, "a new grant");
});

test("capacity holds against claims of one agent made at the same moment: one granted, the rest at_capacity, round after round", async () => {
  const repo = tempRepo();
  const ids = Array.from({ length: 12 }, (_, i) => `c${i}`);
  await seedTasks(repo, ids.map((id) => ({ id })));
  for (let round = 0; round < 3; round++) {
    const mine = ids.slice(round * 4, round * 4 + 4);
    const results = await Promise.all(mine.map((id) => cliAsync(["claim", id, "--json"], { cwd: repo, agent: "alice" })));
    const granted = results.filter((r) => r.code === 0);
    assert.is(granted.length, 1, `round ${round}: ${results.map((r) => `${r.code} ${r.stderr.trim()}`).join(" | ")}`);
    for (const r of results.filter((x) => x.code !== 0)) assert.is(r.json.error.code, "at_capacity", r.stderr);
    const held = cli(["tasks", "--json"], { cwd: repo }).json.filter((t: { claim: { agent: string } | null }) => t.claim?.agent === "alice");
    assert.is(held.length, 1, `round ${round}: alice holds ${held.map((t: { id: string }) => t.id).join(" ")}`);
    assert.is(cli(["release", granted[0]!.json.id], { cwd: repo, agent: "alice" }).code, 0);
  }
  // claim --next as well.
  const next = await Promise.all(Array.from({ length: 4 }, () => cliAsync(["claim", "--next", "--json"], { cwd: repo, agent: "bob" })));
  assert.is(next.filter((r) => r.code === 0).length, 1, next.map((r) => r.stderr.trim()).join(" | "));
});

test("self-review and self-ack are refused, naming the key; review.allow_self: true allows them", async () => {
  const t = team(["alice", "bob"]);
  await storeTasks(actor(t, "lead"), [{ id: "api", objective: "api", verify: "true" }]);
  await storeClaim(actor(t, "alice"), "api");
  assert.is(t.as("alice", ["handoff", "api", "--note", "n"]).code, 0);
  assert.is(t.as("alice", ["done", "api"]).code, 0);
  const refs = handoffRefs(t.repo);
  const self = t.as("alice", ["review", "accept", "api"]);
  assert.is(self.code, 3);
  assert.match(self.stderr, /alice submitted task api and cannot accept its own review \(review\.allow_self is false in the policy read here/);
  const ack = t.as("alice", ["ack", "api#1"]);
  assert.is(ack.code, 3);
  assert.match(ack.stderr, /alice produced handoff api#1 and cannot acknowledge it itself \(review\.allow_self is false/);
  assert.is(handoffRefs(t.repo), refs);
  assert.is(t.as("bob", ["ack", "api#1"]).code, 0, "the consumer acks");

  commitFile(t.repo, ".handoff.yaml", "review:\n  allow_self: true\n", "policy: self review allowed");
  assert.is(t.as("alice", ["review", "accept", "api"]).code, 0, "allowed by the repository's policy");
});

test("a rejection reaches its author: inbox (text and --json) and the SessionStart context", async () => {
  const t = team(["alice"]);
  await storeTasks(actor(t, "lead"), [{ id: "api", objective: "api", verify: "true" }]);
  await storeClaim(actor(t, "alice"), "api");
  assert.is(t.as("alice", ["done", "api"]).code, 0);
  assert.is(t.as("alice", ["inbox"]).stdout.trim(), "inbox empty");
  assert.is(t.as("lead", ["review", "reject", "api", "--reason", "needs error messages"]).code, 0);
  const text = t.as("alice", ["inbox"]).stdout;
  assert.match(text, /review of api rejected by lead at .*: claim it again: git handoff claim api/);
  assert.match(text, /untrusted/);
  assert.match(text, /needs error messages/);
  const json = t.as("alice", ["inbox", "--json"]).json;
  assert.equal(json.map((e: { kind: string; task: string; by: string; reason: string }) => [e.kind, e.task, e.by, e.reason]), [["rejection", "api", "lead", "needs error messages"]]);
  const hook = cli(["hook", "claude-session-start"], {
    cwd: t.wt.alice!,
    agent: "alice",
    input: JSON.stringify({ session_id: "s1", cwd: t.wt.alice, hook_event_name: "SessionStart", source: "startup" }),
  });
  assert.is(hook.code, 0, hook.stderr);
  assert.match(hook.json.hookSpecificOutput.additionalContext, /1 review of alice's work rejected[\s\S]*needs error messages/);
  // Submitted again: it leaves the inbox.
  assert.is(t.as("alice", ["claim", "api"]).code, 0);
  assert.is(t.as("alice", ["done", "api"]).code, 0);
  assert.is(t.as("alice", ["inbox"]).stdout.trim(), "inbox empty");
});

test("blocked: the claim hint is true, task list --status blocked lists todo tasks with unfinished dependencies", async () => {
  const t = team(["alice", "bob"]);
  await storeTasks(actor(t, "lead"), [{ id: "api", objective: "api" }, { id: "tests", objective: "tests", after: ["api"] }, { id: "free", objective: "free" }]);
  await storeClaim(actor(t, "alice"), "api");
  assert.is(t.as("alice", ["handoff", "api", "--note", "contract"]).code, 0);
  const blocked = t.as("bob", ["claim", "tests"]);
  assert.is(blocked.code, 3);
  assert.match(blocked.stderr, /its handoffs come with your claim of tests \(git handoff claim tests\), readable before in git handoff task show api/);
  assert.match(t.as("bob", ["task", "show", "api"]).stdout, /handoff api#1/, "the hint's command shows the handoff");
  const list = t.as("lead", ["task", "list", "--status", "blocked", "--json"]);
  assert.is(list.code, 0, list.stderr);
  assert.equal(list.json.map((x: { id: string }) => x.id), ["tests"]);
  assert.equal(t.as("lead", ["task", "list", "--status", "todo", "--json"]).json.map((x: { id: string }) => x.id), ["tests", "free"], "todo still includes blocked tasks");
  assert.match(t.as("lead", ["task", "list", "--status", "nope"]).stderr, /use one of .*blocked/);
});

test("unlease reports per path; leases prints a scope lease's reason once", async () => {
  const t = team(["alice", "bob"]);
  await storeLease(actor(t, "alice"), ["a.ts", "b.ts"]);
  await storeLease(actor(t, "bob"), ["c.ts"]);
  const r = t.as("alice", ["unlease", "a.ts", "c.ts", "ghost.ts", "--json"]);
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.json.released, ["a.ts"]);
  assert.equal(r.json.not_released, [
    { path: "c.ts", code: "not_holder", holders: ["bob"] },
    { path: "ghost.ts", code: "not_found", holders: [] },
  ]);
  const text = t.as("alice", ["unlease", "b.ts", "c.ts"]).stdout;
  assert.equal(text.trim().split("\n"), ["unleased b.ts", "not held: c.ts (held by bob)"]);
  const refs = handoffRefs(t.repo);
  const none = t.as("alice", ["unlease", "c.ts"]);
  assert.is(none.code, 3, "holding none of them is still refused");
  assert.is(handoffRefs(t.repo), refs);

  await storeTasks(actor(t, "lead"), [{ id: "w", objective: "w", scope: ["src/**"] }]);
  await storeClaim(actor(t, "alice"), "w");
  const line = t.as("lead", ["leases"]).stdout.split("\n").find((l) => l.startsWith("src/**"))!;
  assert.is(line.match(/task w/g)?.length, 1, line);
});

test.run();
