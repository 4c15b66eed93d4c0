import { writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, cliAsync, gitOut, handoffRefs } from "./support/repo.ts";
import { DAY, later, MIN, team } from "./support/team.ts";
import { storeClaim, storeSession, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

test("agents declare sessions in their worktrees; agents shows status, claims and capacity", async () => {
  const t = team(["alice", "bob"]);
  const a = t.as("alice", ["session", "start", "--objective", "change the API", "--files", "src/api/**", "--files", "docs/api.md", "--awaits", "nothing", "--session", "s-123", "--json"]);
  assert.is(a.code, 0, a.stderr);
  assert.is(a.json.branch, "alice-work");
  assert.is(a.json.worktree, t.wt.alice);
  assert.equal(a.json.files, ["src/api/**", "docs/api.md"]);
  assert.is(a.json.session, "s-123");
  assert.is(t.as("bob", ["session", "start", "--objective", "write tests", "--awaits", "the API from alice"]).code, 0);

  await storeTasks({ cwd: t.repo, agent: "lead" }, [{ id: "api", objective: "api" }]);
  await storeClaim({ cwd: t.wt.alice!, agent: "alice" }, "api");

  const r = t.as("lead", ["agents", "--json"]);
  assert.is(r.code, 0, r.stderr);
  const byName = Object.fromEntries(r.json.agents.map((x: any) => [x.agent, x]));
  assert.is(byName.alice.status, "active");
  assert.equal(byName.alice.claimed, ["api"]);
  assert.equal(byName.alice.capacity, { claimed: 1, max: 1 });
  assert.is(byName.bob.awaits, "the API from alice");
  assert.is(byName.bob.branch, "bob-work");
  assert.equal(byName.bob.capacity, { claimed: 0, max: 1 });
  assert.not.ok("lead" in byName, "a command alone does not declare an agent");

  const text = t.as("lead", ["agents"]).stdout;
  assert.match(text, /alice\s+active\s+1\/1/);
  assert.match(text, /\[api\]/);
});

test("agents and status line up an undeclared holder whose name is longer than every declared one", async () => {
  // A person without HANDOFF_AGENT holds tasks as user@host, often the longest name listed.
  const t = team(["alice"]);
  await storeSession({ cwd: t.wt.alice!, agent: "alice" }, "the api");
  await storeTasks({ cwd: t.repo, agent: "lead" }, [{ id: "docs", objective: "docs" }]);
  await storeClaim({ cwd: t.repo, agent: "someone@a-long-host" }, "docs");
  const column = (text: string, agent: string) => {
    const line = text.split("\n").find((l) => l.trimStart().startsWith(`${agent} `) && / (active|undeclared) /.test(l));
    assert.ok(line, `a roster line for ${agent} in:\n${text}`);
    return line!.search(/(active|undeclared)/);
  };
  for (const args of [["agents"], ["status", "--no-conflicts"]]) {
    const text = t.as("lead", args).stdout;
    assert.is(column(text, "someone@a-long-host"), column(text, "alice"), `${args[0]}:\n${text}`);
  }
  // A holder that never declared has no heartbeat state: a --status filter leaves it out, as it
  // does agents in other states (text and --json alike).
  const filtered = t.as("lead", ["agents", "--status", "stale", "--json"]).json;
  assert.equal([filtered.agents, filtered.undeclared_holders], [[], []]);
  assert.is(t.as("lead", ["agents", "--status", "stale"]).stdout.trim(), "no agents");
  assert.equal(t.as("lead", ["agents", "--json"]).json.undeclared_holders.map((u: { agent: string }) => u.agent), ["someone@a-long-host"]);
});

test("status by heartbeat age with thresholds from .handoff.yaml; --status filters", async () => {
  const t = team(["alice"]);
  await storeSession({ cwd: t.wt.alice!, agent: "alice" }, "x");
  const at = (ms: number) => ({ HANDOFF_NOW: later(ms) });
  const status = (ms: number, extra: string[] = []) => t.as("lead", ["agents", "--json", ...extra], at(ms)).json.agents.map((x: any) => x.status);
  assert.equal(status(0), ["active"]);
  assert.equal(status(15 * MIN), ["stale"]);
  assert.equal(status(2 * 60 * MIN), ["disconnected"]);
  assert.equal(status(15 * MIN, ["--status", "active"]), []);
  assert.equal(status(15 * MIN, ["--status", "stale"]), ["stale"]);

  // The lead's main worktree holds the policy file.
  writeFileSync(`${t.repo}/.handoff.yaml`, "stale_after: 30m\ndisconnected_after: 3h\n");
  assert.equal(status(15 * MIN), ["active"]);
  assert.equal(status(2 * 60 * MIN), ["stale"]);

  const bad = t.as("lead", ["agents", "--status", "sleepy"]);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /unknown agent status "sleepy"/);
});

test("every command refreshes the heartbeat, at most once a minute, without growing the history", async () => {
  const t = team(["alice"]);
  await storeSession({ cwd: t.wt.alice!, agent: "alice" }, "x");
  const ref = "refs/handoff/agents/alice";
  const tip0 = gitOut(t.repo, "rev-parse", ref);
  assert.is(t.as("alice", ["tasks"]).code, 0);
  assert.is(gitOut(t.repo, "rev-parse", ref), tip0, "a command within the interval writes nothing");

  assert.is(t.as("alice", ["tasks"], { HANDOFF_NOW: later(2 * MIN) }).code, 0);
  const tip1 = gitOut(t.repo, "rev-parse", ref);
  assert.is.not(tip1, tip0, "a command after the interval refreshes the heartbeat");
  assert.is(t.as("alice", ["tasks"], { HANDOFF_NOW: later(4 * MIN) }).code, 0);
  const log = gitOut(t.repo, "log", "--format=%s", ref).split("\n");
  assert.equal(log, ["heartbeat of alice", "session started by alice: x"], "consecutive heartbeats replace each other");
  const rec = t.as("lead", ["agents", "--json"], { HANDOFF_NOW: later(4 * MIN) }).json.agents[0];
  assert.ok(rec.heartbeat_age_ms < MIN);

  // Another agent's commands never touch alice's ref; ended sessions are not refreshed.
  assert.is(t.as("bob", ["tasks"], { HANDOFF_NOW: later(10 * MIN) }).code, 0);
  assert.is(t.as("alice", ["session", "end"], { HANDOFF_NOW: later(5 * MIN) }).code, 0);
  const ended = gitOut(t.repo, "rev-parse", ref);
  assert.is(t.as("alice", ["tasks"], { HANDOFF_NOW: later(20 * MIN) }).code, 0);
  assert.is(gitOut(t.repo, "rev-parse", ref), ended);
  assert.is(t.as("lead", ["agents", "--json"]).json.agents[0].status, "disconnected");
});

test("an agent silent for 7 days is removed by gc: ref gone, claims released, removal in events", async () => {
  const t = team(["alice", "bob"]);
  await storeSession({ cwd: t.wt.alice!, agent: "alice" }, "long job");
  await storeSession({ cwd: t.wt.bob!, agent: "bob" }, "other");
  await storeTasks({ cwd: t.repo, agent: "lead" }, [{ id: "long", objective: "long" }]);
  await storeClaim({ cwd: t.wt.alice!, agent: "alice" }, "long", { ttl: "30d" });

  const early = t.as("bob", ["gc", "--json"], { HANDOFF_NOW: later(6 * DAY) });
  assert.is(early.code, 0, early.stderr);
  assert.equal(early.json.removed, []);

  // A dry run names the same agent and task, and writes nothing (its own heartbeat aside).
  const refs = () => handoffRefs(t.repo).split("\n").filter((l) => !l.startsWith("refs/handoff/agents/bob ")).join("\n");
  const was = refs();
  const dry = t.as("bob", ["gc", "--dry-run", "--json"], { HANDOFF_NOW: later(8 * DAY) });
  assert.is(dry.code, 0, dry.stderr);
  assert.ok(dry.json.dry_run);
  assert.equal(dry.json.removed.map((r: any) => [r.agent, r.released]), [["alice", ["long"]]]);
  assert.is(refs(), was);
  assert.match(t.as("bob", ["gc", "--dry-run"], { HANDOFF_NOW: later(8 * DAY) }).stdout, /^would remove alice \(silent since .*\), would release long$/m);

  const g = t.as("bob", ["gc", "--json"], { HANDOFF_NOW: later(8 * DAY) });
  assert.is(g.code, 0, g.stderr);
  assert.equal(g.json.removed.map((r: any) => [r.agent, r.released]), [["alice", ["long"]]]);
  assert.not.match(handoffRefs(t.repo), /agents\/alice/);
  assert.match(handoffRefs(t.repo), /agents\/bob/, "the caller is never collected");

  const task = t.as("lead", ["task", "show", "long", "--json"], { HANDOFF_NOW: later(8 * DAY) }).json;
  assert.is(task.status, "todo");
  assert.is(task.claim, null);
  const ev = t.as("lead", ["events", "--type", "agent_gc", "--json"], { HANDOFF_NOW: later(8 * DAY) }).json;
  assert.equal(ev.map((e: any) => [e.task, e.agent, e.by]).sort(), [["", "alice", "bob"], ["long", "alice", "bob"]]);
  assert.match(gitOut(t.repo, "log", "-1", "--format=%s", "refs/handoff/gc-log"), /removed agent alice/);
  // The log keeps the last declaration.
  assert.match(gitOut(t.repo, "show", "refs/handoff/gc-log:agent.json"), /long job/);
  assert.equal(t.as("bob", ["gc", "--json"], { HANDOFF_NOW: later(9 * DAY) }).json.removed, [], "gc is idempotent");
});

test("concurrent gc runs remove a silent agent once: one log entry, one release", async () => {
  const t = team(["alice"]);
  await storeSession({ cwd: t.wt.alice!, agent: "alice" }, "x");
  await storeTasks({ cwd: t.repo, agent: "lead" }, [{ id: "job", objective: "job" }]);
  await storeClaim({ cwd: t.wt.alice!, agent: "alice" }, "job", { ttl: "30d" });
  const env = { HANDOFF_NOW: later(8 * DAY) };
  const runs = await Promise.all(Array.from({ length: 6 }, (_, i) => cliAsync(["gc", "--json"], { cwd: t.repo, agent: `sweeper${i}`, env })));
  for (const r of runs) assert.is(r.code, 0, r.stderr);
  assert.is(runs.filter((r) => r.json.removed.length === 1).length, 1, "exactly one run removed alice");
  assert.equal(gitOut(t.repo, "log", "--format=%s", "refs/handoff/gc-log").split("\n").length, 1);
  assert.equal(gitOut(t.repo, "log", "--format=%s", "refs/handoff/tasks/job").split("\n").filter((l) => l.startsWith("released job")).length, 1);
});

test("bad input: missing objective, oversized text, bad names; no ref changes", () => {
  const t = team(["alice"]);
  assert.is(t.as("alice", ["session", "start", "--objective", "x"]).code, 0);
  const before = handoffRefs(t.repo);
  const cases: [string[], number, RegExp][] = [
    [["session", "start"], 2, /objective/],
    [["session", "start", "--objective", "   "], 2, /needs --objective/],
    [["session", "start", "--objective", "x", "--awaits", "y".repeat(9000)], 2, /--awaits is 9000 characters/],
    [["session", "start", "--objective", "x", "--files", "a".repeat(600)], 2, /glob must be 1 to 500/],
    [["session", "start", "--objective", "x", "--session", "a\u0001b"], 2, /--session/],
    [["--agent", "../evil", "heartbeat"], 2, /invalid agent name/],
  ];
  for (const [args, code, re] of cases) {
    const r = t.as("alice", args);
    assert.is(r.code, code, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, re);
  }
  assert.is(cli(["session", "end"], { cwd: t.repo, agent: "nobody" }).code, 4);
  assert.is(handoffRefs(t.repo), before);
});

test.run();
