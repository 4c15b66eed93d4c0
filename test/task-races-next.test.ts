// Real CLI processes racing `claim --next`: each call that wins must get a task no other call got,
// whether the callers are different agents or one agent in several processes (support: claim-race.ts).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, cliAsync, gitOut, seedTasks, tempRepo } from "./support/repo.ts";
import { race, RACERS } from "./support/claim-race.ts";

test.after(cleanupTemp);

test(`claim --next by ${RACERS} racing processes: every winner gets a different task`, async () => {
  const repo = tempRepo();
  const pool = Array.from({ length: 20 }, (_, i) => `pool-${String(i).padStart(2, "0")}`);
  await seedTasks(repo, pool.map((id, i) => ({ id, priority: i % 3 })));
  const results = await race("", [repo], ["claim", "--next", "--json"]);
  for (const [agent, r] of results) assert.is(r.code, 0, `${agent}: ${r.stderr}`);
  const got = results.map(([agent, r]) => {
    assert.is(r.json.claim.agent, agent);
    return r.json.id as string;
  });
  assert.is(new Set(got).size, RACERS, `duplicates in ${got.join(" ")}`);
  const tasks = cli(["tasks", "--json"], { cwd: repo, agent: "lead" }).json;
  assert.is(tasks.filter((t: any) => t.status === "claimed").length, RACERS);
  for (const t of tasks) {
    const claims = gitOut(repo, "log", "--format=%s", `refs/handoff/tasks/${t.id}`).split("\n").filter((l) => l.startsWith("claimed "));
    assert.is(claims.length, t.status === "claimed" ? 1 : 0, t.id);
  }
  // the 4 left over are the lowest priority ones
  const left = tasks.filter((t: any) => t.status === "todo");
  assert.ok(left.every((t: any) => t.priority === 0), JSON.stringify(left.map((t: any) => [t.id, t.priority])));
});

test("claim --next by 6 processes of one agent at once: each call gets a task of its own, never one another call just took", async () => {
  const repo = tempRepo();
  await seedTasks(repo, Array.from({ length: 12 }, (_, i) => ({ id: `own-${String(i).padStart(2, "0")}` })));
  const results = await Promise.all(Array.from({ length: 6 }, () => cliAsync(["claim", "--next", "--json", "--over-capacity"], { cwd: repo, agent: "alice" })));
  for (const r of results) assert.is(r.code, 0, r.stderr);
  const got = results.map((r) => r.json.id as string);
  assert.is(new Set(got).size, 6, `one task answered to several calls: ${got.join(" ")}`);
  for (const r of results) assert.is(r.json.claim.fence, 1);
  const tasks = cli(["tasks", "--json"], { cwd: repo, agent: "lead" }).json;
  assert.is(tasks.filter((t: any) => t.status === "claimed").length, 6);
});

test.run();
