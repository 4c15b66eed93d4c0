import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, cliAsync, gitOut, handoffRefs, tempRepo } from "./support/repo.ts";
import { storeClaim, storeTasks, type TaskSeed } from "./support/seed.ts";
import { team } from "./support/team.ts";

test.after(cleanupTemp);

/** `task add "work on ID" --id ID ...` by the lead, for each. */
const add = (repo: string, tasks: TaskSeed[]) => storeTasks({ cwd: repo, agent: "lead" }, tasks);

test("depend, cycle refusal naming the cycle, self-dependency, unknown tasks: refusals change no ref", async () => {
  const repo = tempRepo();
  await add(repo, [{ id: "api" }, { id: "tests", after: ["api"] }, { id: "docs" }]);
  assert.is(cli(["depend", "docs", "--on", "tests"], { cwd: repo }).code, 0);
  const before = handoffRefs(repo);

  const cyc = cli(["depend", "api", "--on", "docs", "--json"], { cwd: repo });
  assert.is(cyc.code, 3);
  assert.match(cyc.stderr, /would close the cycle api -> docs -> tests -> api/);
  assert.equal(cyc.json.error.data.cycle, ["api", "docs", "tests", "api"]);
  const cases: [string[], number, RegExp][] = [
    [["depend", "api", "--on", "api"], 2, /cannot depend on itself/],
    [["depend", "api", "--on", "nope"], 4, /no task nope/],
    [["depend", "nope", "--on", "api"], 4, /no task nope/],
    [["depend", "api"], 2, /needs --on/],
    [["depend", "api", "--on", "../x"], 2, /invalid task id/],
    [["undepend", "api", "--on", "docs"], 4, /does not wait on docs/],
    [["task", "add", "x", "--after", "ghost"], 4, /no task ghost/],
    [["task", "add", "x", "--id", "x", "--after", "x"], 2, /cannot depend on itself/],
  ];
  for (const [args, code, re] of cases) {
    const r = cli(args, { cwd: repo });
    assert.is(r.code, code, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, re);
  }
  assert.is(handoffRefs(repo), before, "no ref changed by a refusal");

  // Undepend breaks the chain, after which the former cycle edge is fine.
  assert.is(cli(["undepend", "docs", "--on", "tests"], { cwd: repo }).code, 0);
  const ok = cli(["depend", "api", "--on", "docs", "--json"], { cwd: repo });
  assert.is(ok.code, 0, ok.stderr);
  assert.equal(ok.json.after, ["docs"]);
  assert.match(cli(["events", "--task", "api"], { cwd: repo }).stdout, /depended\s+api\s+\S+\s+on=docs/);
});

test("claiming a blocked task is refused naming the edge and the blocker's holder; --force overrides; claim --next skips it", async () => {
  const t = team(["alice", "bob"]);
  const lead = (args: string[]) => t.as("lead", args);
  await add(t.repo, [{ id: "api", objective: "api" }, { id: "tests", objective: "tests", after: ["api"], priority: 9 }]);
  await storeClaim({ cwd: t.wt.alice!, agent: "alice" }, "api");

  const before = handoffRefs(t.repo);
  const r = t.as("bob", ["claim", "tests", "--json"]);
  assert.is(r.code, 3);
  assert.is(r.json.error.code, "blocked");
  assert.is(r.json.error.recoverable, true, "waiting can resolve it");
  assert.match(r.stderr, /tests waits on api \(claimed by alice until/);
  assert.equal(r.json.error.data.blocked_by.map((e: any) => [e.task, e.waits_on, e.holder]), [["tests", "api", "alice"]]);
  assert.is(handoffRefs(t.repo), before);

  const next = t.as("bob", ["claim", "--next"]);
  assert.is(next.code, 3, "the only unclaimed task is blocked, though it has the higher priority");
  assert.match(next.stderr, /no task is ready/);

  const show = lead(["task", "show", "tests", "--json"]).json;
  assert.equal(show.blocked_by.map((e: any) => `${e.task}<-${e.waits_on}:${e.status}:${e.holder}`), ["tests<-api:claimed:alice"]);
  assert.match(lead(["task", "show", "tests"]).stdout, /blocked:\s+tests waits on api \(claimed by alice/);
  assert.equal(lead(["ready", "--json"]).json, []);

  const forced = t.as("bob", ["claim", "tests", "--force", "--json"]);
  assert.is(forced.code, 0, forced.stderr);
  assert.is(forced.json.claim.agent, "bob");
  assert.is(t.as("bob", ["release", "tests"]).code, 0);

  assert.is(t.as("alice", ["done", "api"]).code, 0);
  const ready = lead(["ready", "--json"]).json.map((x: any) => x.id);
  assert.equal(ready, ["tests"]);
  const claimed = t.as("bob", ["ready", "--claim", "--json"]);
  assert.is(claimed.code, 0, claimed.stderr);
  assert.is(claimed.json.id, "tests");
  assert.is(claimed.json.base.length, 40, "the claim records the claimer's HEAD as the task's base");
});

test("an agent whose claim expired claims the task again as anyone would: refused while a dependency added since is not done", async () => {
  const repo = tempRepo();
  await add(repo, [{ id: "api" }, { id: "spec" }]);
  const now = Date.now();
  const at = (ms: number) => ({ HANDOFF_NOW: new Date(now + ms).toISOString() });
  assert.is(cli(["claim", "api", "--ttl", "1m"], { cwd: repo, agent: "alice", env: at(0) }).code, 0);
  assert.is(cli(["depend", "api", "--on", "spec"], { cwd: repo, agent: "lead", env: at(10_000) }).code, 0);
  const renewed = cli(["claim", "api", "--ttl", "1m", "--json"], { cwd: repo, agent: "alice", env: at(20_000) });
  assert.is(renewed.code, 0, `claiming a task one holds renews it, blocked or not: ${renewed.stderr}`);
  assert.is(renewed.json.claim.fence, 1);

  const before = handoffRefs(repo);
  const again = cli(["claim", "api", "--json"], { cwd: repo, agent: "alice", env: at(2 * 60_000) });
  assert.is(again.code, 3, "alice's claim ran out: a new grant, and api waits on spec");
  assert.is(again.json.error.code, "blocked");
  assert.match(again.stderr, /api waits on spec \(todo\)/);
  assert.is(handoffRefs(repo), before);
});

/** A task's record as its ref holds it (read with git: the race's outcome, not a command's view of it). */
const stored = (repo: string, id: string) => JSON.parse(gitOut(repo, "show", `refs/handoff/tasks/${id}:task.json`));

test("ready --claim race: 16 processes in two worktrees, one winner per ready task, blocked tasks untouched", async () => {
  const t = team(["w1", "w2"]);
  for (let round = 0; round < 2; round++) {
    const ids = [0, 1, 2, 3].map((i) => `r${round}-t${i}`);
    await add(t.repo, [...ids.map((id) => ({ id, priority: round })), { id: `r${round}-gate` }, { id: `r${round}-blocked`, after: [`r${round}-gate`], priority: 100 }]);
    // Winners of the first round claim again in the second: past their capacity of one.
    await storeClaim({ cwd: t.repo, agent: "gatekeeper" }, `r${round}-gate`, { overCapacity: true });
    const runs = await Promise.all(
      Array.from({ length: 16 }, (_, i) => cliAsync(["ready", "--claim", "--json", "--over-capacity"], { cwd: t.wt[i % 2 ? "w1" : "w2"]!, agent: `racer${i}` })),
    );
    const winners = runs.filter((r) => r.code === 0);
    const losers = runs.filter((r) => r.code !== 0);
    const won = winners.map((r) => r.json.id).sort();
    assert.equal([...new Set(won)], won, "no task was won twice");
    for (const r of winners) {
      assert.ok(ids.includes(r.json.id), `only ready tasks are taken, not ${r.json.id}`);
      assert.is(stored(t.repo, r.json.id).claim.agent, r.json.claim.agent, "the stored holder is the one that was told it won");
    }
    for (const l of losers) {
      assert.is(l.code, 3, l.stderr);
      assert.match(l.stderr, /no task is ready|gave up after repeated concurrent updates/);
    }
    // On a badly overloaded machine a loser may give up on its retry budget (exit 3, lost_race)
    // while a task is still free; otherwise every ready task has exactly one winner.
    if (!losers.some((l) => /gave up/.test(l.stderr))) assert.equal(won, ids, runs.map((r) => r.stderr).join("\n"));
    const blocked = stored(t.repo, `r${round}-blocked`);
    assert.is(blocked.status, "todo");
    assert.is(blocked.claim, null);
  }
});

test("two concurrent depends that would close a cycle: never both", async () => {
  const repo = tempRepo();
  for (let i = 0; i < 4; i++) {
    await add(repo, [{ id: `a${i}` }, { id: `b${i}` }]);
    const [x, y] = await Promise.all([
      cliAsync(["depend", `a${i}`, "--on", `b${i}`], { cwd: repo }),
      cliAsync(["depend", `b${i}`, "--on", `a${i}`], { cwd: repo }),
    ]);
    assert.is([x, y].filter((r) => r.code === 0).length, 1, x.stderr + y.stderr);
    assert.ok([x, y].some((r) => r.code === 3 && /cycle/.test(r.stderr)));
  }
});

test.run();
