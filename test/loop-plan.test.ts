// The session loop's plan: ready tasks grouped into units. The pure function on records first
// (including a property check over random task graphs), then `loop plan` as a user runs it.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { overlapWitness } from "../src/core/glob-overlap.ts";
import { planLoop } from "../src/core/loop-plan.ts";
import type { Task } from "../src/core/task.ts";
import { cleanupTemp, cli, handoffRefs, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const NOW = new Date("2026-12-01T10:00:00Z");
let seq = 0;

function task(id: string, o: Partial<Task> = {}): Task {
  const at = new Date(NOW.getTime() - 3_600_000 + seq++ * 1000).toISOString();
  return { id, objective: `work on ${id}`, status: "todo", priority: 0, scope: [], claim: null, attempts: 0, max_attempts: 3, fence: 0, created_by: "lead", created_at: at, updated_at: at, result: null, ...o };
}

function claimedBy(agent: string, expiresInMs = 600_000): Partial<Task> {
  return { status: "claimed", fence: 1, claim: { agent, claimed_at: NOW.toISOString(), expires_at: new Date(NOW.getTime() + expiresInMs).toISOString(), fence: 1, ttl_ms: 600_000, worktree: null, branch: null, scope: "primary" } };
}

/** The six tasks of the issue: two with overlapping scopes, a chain of three, one on its own. */
function six(): Task[] {
  return [
    task("api", { scope: ["src/api/**"] }),
    task("users", { scope: ["src/api/users.ts"] }),
    task("c1", { scope: ["lib/one.ts"] }),
    task("c2", { scope: ["lib/two.ts"], after: ["c1"] }),
    task("c3", { scope: ["lib/three.ts"], after: ["c2"] }),
    task("docs", { scope: ["docs/**"] }),
  ];
}

test("six tasks: the overlapping pair is one unit, the chain one unit in dependency order, the rest alone", () => {
  const plan = planLoop(six(), NOW, { maxWorktrees: 8 });
  assert.equal(
    plan.units.map((u) => u.tasks),
    [["api", "users"], ["c1", "c2", "c3"], ["docs"]],
  );
  assert.equal(plan.units.map((u) => u.id), ["u1", "u2", "u3"]);
  assert.equal(plan.units[0]!.scope, ["src/api/**", "src/api/users.ts"]);
  assert.equal(plan.units.map((u) => u.after), [[], [], []]);
  assert.equal(plan.waiting, []);
});

test("dependency order beats priority inside a unit; units come in the order of their best task", () => {
  const tasks = [task("low", { priority: 0, scope: ["a.txt"] }), task("base", { priority: 1 }), task("top", { priority: 9, after: ["base"] })];
  const plan = planLoop(tasks, NOW, { maxWorktrees: 4 });
  assert.equal(plan.units.map((u) => u.tasks), [["base", "top"], ["low"]]);
});

test("overlap is transitive: a overlaps b, b overlaps c, so all three share a unit though a and c do not meet", () => {
  const tasks = [task("a", { scope: ["src/a/**"] }), task("b", { scope: ["src/{a,c}/index.ts"] }), task("c", { scope: ["src/c/**"] }), task("d", { scope: ["src/d/**"] })];
  assert.is(overlapWitness("src/a/**", "src/c/**"), null);
  const plan = planLoop(tasks, NOW, { maxWorktrees: 4 });
  assert.equal(plan.units.map((u) => u.tasks.slice().sort()), [["a", "b", "c"], ["d"]]);
});

test("a diamond of dependencies is one unit, each task after everything it waits on", () => {
  const tasks = [task("d", { after: ["b", "c"] }), task("b", { after: ["a"] }), task("c", { after: ["a"] }), task("a")];
  const [u] = planLoop(tasks, NOW, { maxWorktrees: 1 }).units;
  assert.is(u!.tasks[0], "a");
  assert.is(u!.tasks[3], "d");
});

test("left out, with the reason: waiting on a claimed task, on a missing one, on one that is left out, addressed tasks", () => {
  const tasks = [
    task("held", { ...claimedBy("alice"), scope: ["src/**"] }),
    task("after-held", { after: ["held"] }),
    task("after-that", { after: ["after-held"] }),
    task("ghost-dep", { after: ["ghost"] }),
    task("for-codex", { to: { kind: "codex", machine: null } }),
    task("finished", { status: "done" }),
    task("after-finished", { after: ["finished"] }),
  ];
  const plan = planLoop(tasks, NOW, { maxWorktrees: 2 });
  assert.equal(plan.units.map((u) => u.tasks), [["after-finished"]]);
  const why = Object.fromEntries(plan.waiting.map((w) => [w.task, w.reason]));
  assert.equal(Object.keys(why).sort(), ["after-held", "after-that", "for-codex", "ghost-dep"]);
  assert.match(why["after-held"]!, "waits on held, which is claimed");
  assert.match(why["after-that"]!, "waits on after-held, which is not plannable");
  assert.match(why["ghost-dep"]!, "which does not exist");
  assert.match(why["for-codex"]!, "addressed");
});

test("a claim that ran out is work to plan again (the reader applies the expiry)", () => {
  const plan = planLoop([task("stale", claimedBy("alice", -1000)), task("live", claimedBy("bob"))], NOW, { maxWorktrees: 2 });
  assert.equal(plan.units.map((u) => u.tasks), [["stale"]]);
});

test("--max-worktrees: units past the limit wait for the slot of the unit `after` names", () => {
  const tasks = ["a", "b", "c", "d", "e"].map((id) => task(id, { scope: [`${id}.txt`] }));
  const plan = planLoop(tasks, NOW, { maxWorktrees: 2 });
  assert.equal(plan.units.map((u) => [u.id, u.after]), [["u1", []], ["u2", []], ["u3", ["u1"]], ["u4", ["u2"]], ["u5", ["u3"]]]);
  assert.equal(planLoop(tasks, NOW, { maxWorktrees: 1 }).units.map((u) => u.after.join()), ["", "u1", "u2", "u3", "u4"]);
});

test("property: random task graphs; every plannable task in one unit, no scope shared across units, dependencies first", () => {
  let state = 12345;
  const rand = (n: number) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state % n;
  };
  const pool = ["src/**", "src/a/*.ts", "src/a/x.ts", "src/b/**", "docs/*.md", "docs/guide.md", "lib/{x,y}.ts", "lib/y.ts", "test/**/*.test.ts", "test/a.test.ts", "README.md", "z/**"];
  for (let round = 0; round < 60; round++) {
    const n = 3 + rand(14);
    const tasks: Task[] = [];
    for (let i = 0; i < n; i++) {
      const scope = Array.from({ length: rand(3) }, () => pool[rand(pool.length)]!);
      const after = i > 0 && rand(3) === 0 ? [`t${rand(i)}`] : [];
      const status = rand(8) === 0 ? "done" : rand(10) === 0 ? "review" : "todo";
      tasks.push(task(`t${i}`, { scope, priority: rand(3), status, ...(after.length ? { after } : {}) }));
    }
    const max = 1 + rand(4);
    const plan = planLoop(tasks, NOW, { maxWorktrees: max });
    const unitOf = new Map<string, number>();
    plan.units.forEach((u, i) => u.tasks.forEach((t) => {
      assert.not.ok(unitOf.has(t), `${t} is in two units`);
      unitOf.set(t, i);
    }));
    const byId = new Map(tasks.map((t) => [t.id, t]));
    for (const t of tasks) {
      const planned = unitOf.has(t.id);
      const left = plan.waiting.some((w) => w.task === t.id);
      if (t.status !== "todo") assert.ok(!planned && !left, `${t.id} is ${t.status}`);
      else assert.ok(planned !== left, `${t.id}: planned ${planned}, left out ${left}`);
      if (!planned) continue;
      for (const d of t.after ?? []) {
        if (byId.get(d)!.status === "done") continue;
        assert.is(unitOf.get(d), unitOf.get(t.id), `${t.id} and its dependency ${d} in one unit`);
        const u = plan.units[unitOf.get(t.id)!]!;
        assert.ok(u.tasks.indexOf(d) < u.tasks.indexOf(t.id), `${d} before ${t.id}`);
      }
    }
    for (let i = 0; i < plan.units.length; i++) {
      for (let j = i + 1; j < plan.units.length; j++) {
        for (const a of plan.units[i]!.scope) for (const b of plan.units[j]!.scope) assert.is(overlapWitness(a, b), null, `u${i + 1} ${a} meets u${j + 1} ${b}`);
      }
      assert.equal(plan.units[i]!.after, i >= max ? [plan.units[i - max]!.id] : []);
    }
  }
});

test("loop plan: text and --json as a user sees them, and not one ref changes", () => {
  const repo = tempRepo();
  const add = (args: string[]) => assert.is(cli(["task", "add", ...args], { cwd: repo, agent: "lead" }).code, 0);
  add(["the api", "--id", "api", "--scope", "src/api/**"]);
  add(["the users route", "--id", "users", "--scope", "src/api/users.ts"]);
  add(["step one", "--id", "c1", "--scope", "lib/one.ts"]);
  add(["step two", "--id", "c2", "--scope", "lib/two.ts", "--after", "c1"]);
  add(["step three", "--id", "c3", "--scope", "lib/three.ts", "--after", "c2"]);
  add(["the docs", "--id", "docs", "--scope", "docs/**"]);
  const before = handoffRefs(repo, { logs: true });
  const j = cli(["loop", "plan", "--json", "--max-worktrees", "2"], { cwd: repo, agent: "lead" });
  assert.is(j.code, 0, j.stderr);
  assert.equal(j.json.units, [
    { id: "u1", tasks: ["api", "users"], scope: ["src/api/**", "src/api/users.ts"], after: [] },
    { id: "u2", tasks: ["c1", "c2", "c3"], scope: ["lib/one.ts", "lib/two.ts", "lib/three.ts"], after: [] },
    { id: "u3", tasks: ["docs"], scope: ["docs/**"], after: ["u1"] },
  ]);
  assert.is(j.json.max_worktrees, 2);
  const t = cli(["loop", "plan"], { cwd: repo, agent: "lead" });
  assert.is(t.code, 0, t.stderr);
  assert.match(t.stdout, "3 units, up to 2 worktrees at once:");
  assert.match(t.stdout, "u2: c1 -> c2 -> c3");
  assert.match(t.stdout, "u3: docs  (scope docs/**)  after u1");
  const bad = cli(["loop", "plan", "--max-worktrees", "0"], { cwd: repo, agent: "lead" });
  assert.is(bad.code, 2);
  assert.match(bad.stderr, "--max-worktrees must be between 1 and 64");
  // An empty command is refused as such, not as a missing one, and an empty check is no check.
  for (const [args, message] of [
    [["--agent-cmd", ""], "--agent-cmd is empty"],
    [["--agent-cmd", "true", "--verify", " "], "--verify is empty"],
  ] as const) {
    const r = cli(["loop", "run", ...args], { cwd: repo, agent: "lead" });
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, message);
  }
  assert.is(handoffRefs(repo, { logs: true }), before);
});

test("loop plan reads loop.max_worktrees from .handoff.yaml; a bad loop key is refused with the file named", () => {
  const repo = tempRepo();
  for (const id of ["a", "b", "c"]) assert.is(cli(["task", "add", id, "--id", id, "--scope", `${id}.txt`], { cwd: repo, agent: "lead" }).code, 0);
  require_write(repo, ".handoff.yaml", "loop:\n  max_worktrees: 1\n  merge_strategy: squash\n");
  const j = cli(["loop", "plan", "--json"], { cwd: repo });
  assert.is(j.code, 0, j.stderr);
  assert.is(j.json.max_worktrees, 1);
  assert.equal(j.json.units.map((u: any) => u.after.join()), ["", "u1", "u2"]);
  require_write(repo, ".handoff.yaml", "loop:\n  merge_strategy: octopus\n");
  const bad = cli(["loop", "plan", "--json"], { cwd: repo });
  assert.is(bad.code, 2);
  assert.is(bad.json.error.code, "invalid_input");
  assert.match(bad.json.error.message, '.handoff.yaml line 2: loop.merge_strategy: expected "merge" or "squash" or "rebase"');
});

function require_write(repo: string, name: string, text: string): void {
  writeFileSync(join(repo, name), text);
}

test.run();
