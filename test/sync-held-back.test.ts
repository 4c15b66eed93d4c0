// A sync that kept refs of the remote back (refused on receive, or from a newer git-handoff) is not
// a clean success: the CLI exits 3 (code quarantined) beside its report, every sync while they
// stand, and MCP's sync tool answers the refusal `quarantined` with the report as its data. And
// fence-check never says it checked against the remote for a task whose remote ref is held back.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { eventMessage, recordCommit, setRef } from "./support/forge.ts";
import { inProcess } from "./support/mcp.ts";
import { cleanupTemp, cli, gitOut, succeeded } from "./support/repo.ts";
import { storeClaim, storeSync, storeTasks } from "./support/seed.ts";
import { cloneOf, emptyRemote } from "./support/servers.ts";

test.after(cleanupTemp);

const ok = succeeded;

function project() {
  const bare = emptyRemote();
  return { bare, victim: cloneOf(bare) };
}

function taskRecord(id: string) {
  const at = new Date().toISOString();
  return { id, objective: `task ${id}`, status: "todo", priority: 0, scope: [], claim: null, attempts: 0, max_attempts: 3, fence: 0, created_by: "victim", created_at: at, updated_at: at, result: null };
}

test("sync exits 3 while a ref is refused on receive, every time, and --json still lists it; clean again once it is gone", async () => {
  const { bare, victim } = project();
  await storeTasks({ cwd: victim, agent: "victim" }, [{ id: "mine", objective: "mine" }]);
  await storeSync({ cwd: victim, agent: "victim" });
  // A history that does not descend from what this clone validated: refused as rewritten.
  const forged = recordCommit(bare, "task.json", taskRecord("mine"), { author: "victim", message: eventMessage({ type: "created", task: "mine", agent: "victim", at: new Date().toISOString() }) });
  setRef(bare, "refs/handoff/tasks/mine", forged);
  for (const round of [1, 2]) {
    const s = cli(["sync", "--json"], { cwd: victim, agent: "victim" });
    assert.is(s.code, 3, `round ${round}: ${s.stdout}${s.stderr}`);
    assert.equal(s.json.quarantined.map((q: any) => [q.ref, q.kind, q.new]), [["refs/handoff/tasks/mine", "invalid", round === 1]]);
    const t = cli(["sync"], { cwd: victim, agent: "victim" });
    assert.is(t.code, 3);
    assert.match(t.stdout, /refused on receive: refs\/handoff\/tasks\/mine: rewritten history/);
  }
  // MCP's sync agrees: a refusal with the whole report as its data.
  const mcp = await inProcess(victim, { agent: "victim" });
  try {
    const e = await mcp.refused("sync");
    assert.is(e.code, "quarantined");
    assert.match(e.message, /^synced with origin \(.*\), but 1 of its ref\(s\) are kept back.*refused on receive: refs\/handoff\/tasks\/mine \(rewritten history/);
    assert.equal(e.data.quarantined.map((q: any) => q.ref), ["refs/handoff/tasks/mine"]);
    assert.is(e.data.remote, "origin");
    // Its suggestion names no tool that could overwrite the remote: that stays a person's step.
    assert.ok(e.suggestions.some((s: any) => /a person's git handoff sync --repair in a shell/.test(s.detail)), JSON.stringify(e.suggestions));
  } finally {
    await mcp.close();
  }
  // Once repaired, sync is a clean success again, on both front ends.
  ok(cli(["sync", "--repair"], { cwd: victim, agent: "victim" }));
  assert.equal(ok(cli(["sync", "--json"], { cwd: victim, agent: "victim" })).json.quarantined, []);
  const again = await inProcess(victim, { agent: "victim" });
  try {
    assert.equal((await again.ok("sync")).quarantined, []);
  } finally {
    await again.close();
  }
});

test("a ref from a newer git-handoff: sync exits 3 each time, saying so after the first; fence-check on that task refuses instead of answering from the stale copy", async () => {
  const { bare, victim } = project();
  await storeTasks({ cwd: victim, agent: "victim" }, [{ id: "mine", objective: "mine" }]);
  await storeClaim({ cwd: victim, agent: "victim" }, "mine");
  await storeSync({ cwd: victim, agent: "victim" });
  assert.match(ok(cli(["fence-check", "mine"], { cwd: victim, agent: "victim" })).stdout, /checked against remote state/);
  const parent = gitOut(bare, "rev-parse", "refs/handoff/tasks/mine");
  setRef(bare, "refs/handoff/tasks/mine", recordCommit(bare, "task.json", { id: "mine", v2: true }, { parent, format: "git-handoff 3\n", author: "victim" }));
  const first = cli(["sync"], { cwd: victim, agent: "victim" });
  assert.is(first.code, 3, first.stdout + first.stderr);
  assert.match(first.stdout, /from a newer git-handoff: refs\/handoff\/tasks\/mine/);
  const second = cli(["sync", "--json"], { cwd: victim, agent: "victim" });
  assert.is(second.code, 3);
  assert.equal(second.json.quarantined.map((q: any) => [q.ref, q.kind, q.new]), [["refs/handoff/tasks/mine", "newer", false]]);
  assert.match(cli(["sync"], { cwd: victim, agent: "victim" }).stdout, /still kept back, from a newer git-handoff: refs\/handoff\/tasks\/mine \(upgrade git-handoff/);

  const f = cli(["fence-check", "mine", "--json"], { cwd: victim, agent: "victim" });
  assert.is(f.code, 3, f.stdout + f.stderr);
  assert.is(f.json.error.code, "quarantined");
  assert.match(f.json.error.message, /^cannot check mine against origin: its ref there comes from a newer git-handoff/);
  assert.match(f.json.error.suggestions[0].detail, /upgrade git-handoff/);
});

test.run();
