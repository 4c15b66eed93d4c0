// Long-running stores racing for tasks with scopes (write-turn.ts, LocalCandidates): every task is
// granted exactly once, with its scope leased to the winner; a lone claimer takes the queue in
// order and never takes a turn; nothing of the turns is left once the stores close.
import { existsSync, readdirSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { loadLeases } from "../src/store/lease-store.ts";
import { claimNextTask } from "../src/store/task-actions.ts";
import { listTasks } from "../src/store/task-store.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { claimUntilNone } from "./support/claims.ts";
import { cleanEnv, cleanupTemp, seedTasks, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const open = (repo: string, agent: string) => openSyncedStore({ cwd: repo, agent, warm: true, env: cleanEnv() });

test("a lone warm claimer takes the queue in order and takes no turn", async () => {
  const repo = tempRepo();
  await seedTasks(repo, [
    { id: "low", priority: 0, scope: ["low/**"] },
    { id: "high", priority: 5, scope: ["high/**"] },
    { id: "mid", priority: 2, scope: ["mid/**"] },
  ]);
  const store = await open(repo, "solo");
  try {
    const got = [];
    for (let i = 0; i < 3; i++) got.push((await claimNextTask(store, { overCapacity: true })).id);
    assert.equal(got, ["high", "mid", "low"]);
  } finally {
    store.close();
  }
  assert.not.ok(existsSync(`${repo}/.git/handoff/turns`), "no turn was taken");
});

test("four warm stores racing claim --next over tasks with scopes: each task once, its scope leased to its holder", async () => {
  const repo = tempRepo();
  const N = 24;
  await seedTasks(repo, Array.from({ length: N }, (_, i) => ({ id: `t-${i}`, scope: [`area${i}/**`] })));
  const stores = await Promise.all(["a", "b", "c", "d"].map((agent) => open(repo, agent)));
  const granted: { id: string; agent: string }[] = [];
  try {
    await Promise.all(stores.map((s) => claimUntilNone(s, granted)));
    const ids = granted.map((g) => g.id);
    assert.is(new Set(ids).size, ids.length, "no task granted twice");
    assert.is(ids.length, N, "every task granted");
    const { tasks } = await listTasks(stores[0]!);
    const holder = new Map(tasks.map((t) => [t.id, t.claim?.agent]));
    const { set } = await loadLeases(stores[0]!);
    for (const g of granted) {
      assert.is(holder.get(g.id), g.agent, `${g.id} is held by the store it was granted to`);
      assert.equal(set.leases.filter((l) => l.task === g.id).map((l) => l.agent), [g.agent], `${g.id}'s scope is leased to its holder`);
    }
  } finally {
    for (const s of stores) s.close();
  }
  const left = existsSync(`${repo}/.git/handoff/turns`) ? readdirSync(`${repo}/.git/handoff/turns`) : [];
  assert.equal(left, [], "no turn or owner file left once the stores closed");
});

test.run();
