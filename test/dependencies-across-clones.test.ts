// Dependencies between clones that share coordination state through a sync remote: a claim counts
// only on the remote's record of its dependencies, and two clones cannot close a cycle together.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";
import { inProcess, type McpHandle } from "./support/mcp.ts";
import { storeClaim, storeDone, storeSync, storeTasks, type TaskSeed } from "./support/seed.ts";

const open: McpHandle[] = [];
test.after(async () => {
  for (const h of open) await h.close();
  cleanupTemp();
});

function project() {
  const bare = serveRoot().bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  return { bare, a: cloneOf(bare), b: cloneOf(bare) };
}

const ok = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};

const remoteTask = (bare: string, id: string) => JSON.parse(gitOut(bare, "show", `refs/handoff/tasks/${id}:task.json`));

/** The lead adds `tasks` in clone a, which syncs them out, and b syncs them in. */
async function sharedTasks(p: { a: string; b: string }, tasks: TaskSeed[]): Promise<void> {
  await storeTasks({ cwd: p.a, agent: "lead" }, tasks);
  await storeSync({ cwd: p.a });
  await storeSync({ cwd: p.b });
}

async function dependencyAndDependent() {
  const p = project();
  await sharedTasks(p, [{ id: "D", objective: "dependency" }, { id: "T", objective: "dependent", after: ["D"] }]);
  return p;
}

test("claim of a dependent: a local done of its dependency that the remote refuses grants nothing", async () => {
  const { bare, a, b } = await dependencyAndDependent();
  await storeClaim({ cwd: b, agent: "bob" }, "D");
  // Clone a has not seen bob's claim: the done is accepted here, and is not on the remote.
  await storeDone({ cwd: a, agent: "alice" }, "D");
  const claim = cli(["claim", "T", "--json"], { cwd: a, agent: "alice" });
  assert.is(claim.code, 3, claim.stderr);
  assert.is(claim.json.error.code, "blocked");
  assert.match(claim.stderr, /claimed by bob/);
  assert.is(remoteTask(bare, "T").status, "todo", "nothing was granted on the remote");
  assert.is(remoteTask(bare, "D").claim.agent, "bob");
  // The refused done is a conflict for alice, as sync would have said.
  const conflicts = ok(cli(["sync-conflicts", "--all", "--json"], { cwd: a, agent: "alice" })).json;
  assert.ok(conflicts.some((c: { task: string; event: { type: string } }) => c.task === "D" && c.event.type === "done"), JSON.stringify(conflicts));
  ok(cli(["sync"], { cwd: a }));
  assert.is(ok(cli(["task", "show", "T", "--json"], { cwd: a })).json.status, "todo");
});

test("claim of a dependent: a local done of its dependency not pushed yet goes out with the claim", async () => {
  const { bare, a } = await dependencyAndDependent();
  await storeDone({ cwd: a, agent: "alice" }, "D");
  assert.is(remoteTask(bare, "D").status, "todo", "done is written here only");
  const claim = ok(cli(["claim", "T", "--json"], { cwd: a, agent: "alice" }));
  assert.is(claim.json.claim.agent, "alice");
  assert.is(remoteTask(bare, "T").claim.agent, "alice");
  assert.is(remoteTask(bare, "D").status, "done", "the dependency's done landed with the claim");
  assert.is(gitOut(a, "rev-parse", "refs/handoff/tasks/D"), gitOut(bare, "rev-parse", "refs/handoff/tasks/D"));
  ok(cli(["sync"], { cwd: a }));
});

test("claim --next: a local done of a dependency that the remote refuses grants nothing", async () => {
  const { bare, a, b } = await dependencyAndDependent();
  await storeClaim({ cwd: b, agent: "bob" }, "D");
  await storeDone({ cwd: a, agent: "alice" }, "D");
  // Here D is done and T ready; on the remote D is bob's.
  const next = cli(["claim", "--next", "--json"], { cwd: a, agent: "alice" });
  assert.is(next.code, 3, next.stdout + next.stderr);
  assert.is(next.json.error.code, "no_task_ready");
  assert.is(remoteTask(bare, "T").status, "todo", "nothing was granted on the remote");
  assert.is(remoteTask(bare, "D").claim.agent, "bob");
  const conflicts = ok(cli(["sync-conflicts", "--all", "--json"], { cwd: a, agent: "alice" })).json;
  assert.ok(conflicts.some((c: { task: string; event: { type: string } }) => c.task === "D" && c.event.type === "done"), JSON.stringify(conflicts));
  ok(cli(["sync"], { cwd: a }));
  assert.is(ok(cli(["task", "show", "T", "--json"], { cwd: a })).json.status, "todo");
});

test("claim --next: a local done of its dependency not pushed yet goes out with the claim", async () => {
  const { bare, a } = await dependencyAndDependent();
  await storeDone({ cwd: a, agent: "alice" }, "D");
  assert.is(remoteTask(bare, "D").status, "todo", "done is written here only");
  const next = ok(cli(["claim", "--next", "--json"], { cwd: a, agent: "alice" }));
  assert.is(next.json.id, "T");
  assert.is(remoteTask(bare, "T").claim.agent, "alice");
  assert.is(remoteTask(bare, "D").status, "done", "the dependency's done landed with the claim");
  assert.is(gitOut(a, "rev-parse", "refs/handoff/tasks/D"), gitOut(bare, "rev-parse", "refs/handoff/tasks/D"));
});

test("MCP claim_next (a long-running store): passes over a dependent whose local done the remote refuses, and a done not pushed goes out with the next claim", async () => {
  const { bare, a, b } = await dependencyAndDependent();
  await sharedTasks({ a, b }, [{ id: "T1", objective: "first", after: ["D"], priority: 30 }, { id: "E", objective: "dependency two" }, { id: "U", objective: "dependent two", after: ["E"] }]);
  await storeClaim({ cwd: b, agent: "bob" }, "D");
  await storeDone({ cwd: a, agent: "alice" }, "D");
  await storeDone({ cwd: a, agent: "alice" }, "E");
  // Here T1 (far the best), T and U are ready; on the remote D is bob's and E is not done.
  const alice = await inProcess(a, { agent: "alice" });
  open.push(alice);
  const r = await alice.ok("claim_next");
  assert.is(r.task.id, "U", "the dependents of D were passed over: D is bob's on the remote");
  assert.is(remoteTask(bare, "T1").status, "todo");
  assert.is(remoteTask(bare, "T").status, "todo");
  assert.is(remoteTask(bare, "U").claim.agent, "alice");
  assert.is(remoteTask(bare, "E").status, "done", "E's done landed with the claim of U");
});

test("two clones each add one edge of a cycle: the second to sync is refused, as a conflict, and no cycle reaches the remote", async () => {
  const { bare, a, b } = project();
  await sharedTasks({ a, b }, [{ id: "X", objective: "x" }, { id: "Y", objective: "y" }]);
  ok(cli(["depend", "X", "--on", "Y"], { cwd: a, agent: "alice" }));
  ok(cli(["depend", "Y", "--on", "X"], { cwd: b, agent: "bob" }));
  ok(cli(["sync"], { cwd: a }));
  const refused = cli(["sync"], { cwd: b });
  assert.match(refused.stdout + refused.stderr, /close the cycle Y -> X -> Y with a dependency another clone pushed first: Y does not wait on X/);
  for (const clone of [a, b, a]) ok(cli(["sync"], { cwd: clone }));
  assert.equal(remoteTask(bare, "X").after, ["Y"]);
  assert.equal(remoteTask(bare, "Y").after ?? [], [], "the closing edge never reached the remote");
  for (const clone of [a, b]) {
    assert.equal(ok(cli(["task", "show", "Y", "--json"], { cwd: clone })).json.after ?? [], []);
    ok(cli(["doctor"], { cwd: clone }));
  }
  const conflicts = ok(cli(["sync-conflicts", "--json"], { cwd: b, agent: "bob" })).json;
  assert.is(conflicts.length, 1);
  assert.is(conflicts[0].code, "cycle");
  assert.is(conflicts[0].task, "Y");
});

test("edges from two clones that close no cycle both land, replayed on a task both changed", async () => {
  const { bare, a, b } = project();
  await sharedTasks({ a, b }, ["P", "Q", "R"].map((id) => ({ id, objective: id })));
  ok(cli(["depend", "P", "--on", "Q"], { cwd: a, agent: "alice" }));
  ok(cli(["depend", "P", "--on", "R"], { cwd: b, agent: "bob" }));
  ok(cli(["sync"], { cwd: a }));
  ok(cli(["sync"], { cwd: b }));
  assert.equal([...remoteTask(bare, "P").after].sort(), ["Q", "R"]);
  assert.equal(ok(cli(["sync-conflicts", "--json"], { cwd: b, agent: "bob" })).json, []);
});

test.run();
