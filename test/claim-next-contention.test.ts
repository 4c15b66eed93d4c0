// Contention in long-running processes: eight MCP clients racing claim_next grant every task
// exactly once; a server's listing follows task refs other processes change (loose, packed,
// created, claimed) at once; a transaction refused for a stale or locked ref leaves the warm
// store able to write the next one.
import { writeFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { addTask } from "../src/store/task-store.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { inProcess, overStdio } from "./support/mcp.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const ok = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};

async function seed(repo: string, n: number): Promise<void> {
  const store = await openSyncedStore({ cwd: repo, agent: "lead", warm: true });
  try {
    for (let i = 0; i < n; i++) await addTask(store, { id: `t-${i}`, objective: `task ${i}`, priority: i % 3, scope: [`area${i}/**`], maxAttempts: 3 });
  } finally {
    store.close();
  }
}

test("eight MCP clients racing claim_next over tasks with scopes: every task granted once, to one client", async () => {
  const repo = tempRepo();
  const N = 40;
  await seed(repo, N);
  const clients = await Promise.all(Array.from({ length: 8 }, (_, k) => overStdio(repo, { agent: `racer-${k}` })));
  const granted: { id: string; agent: string }[] = [];
  try {
    await Promise.all(
      clients.map(async (c, k) => {
        for (;;) {
          const r = await c.call("claim_next", { over_capacity: true });
          if (r.isError) {
            const body = JSON.stringify(r.structuredContent ?? r.content);
            assert.match(body, /no_task_ready/, `racer-${k}: ${body}`);
            return;
          }
          granted.push({ id: (r.structuredContent as { task: { id: string } }).task.id, agent: `racer-${k}` });
        }
      }),
    );
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
  const ids = granted.map((g) => g.id).sort();
  assert.is(new Set(ids).size, ids.length, "no task granted twice");
  assert.is(ids.length, N, "every task granted");
  const tasks = ok(cli(["task", "list", "--json"], { cwd: repo, agent: "lead" })).json as { id: string; status: string; claim: { agent: string } | null }[];
  const byId = new Map(tasks.map((t) => [t.id, t]));
  for (const g of granted) assert.is(byId.get(g.id)?.claim?.agent, g.agent, `${g.id} is held by the client it was granted to`);
  const leases = ok(cli(["leases", "--json"], { cwd: repo, agent: "lead" })).json as { pattern: string; agent: string; task: string }[];
  assert.is(leases.length, N, "one scope lease per granted task");
  for (const g of granted) assert.equal(leases.filter((l) => l.task === g.id).map((l) => l.agent), [g.agent]);
});

test("a server's listing follows task refs other processes change, loose or packed", async () => {
  const repo = tempRepo();
  await seed(repo, 3);
  const mcp = await inProcess(repo, { agent: "server" });
  try {
    const ids = async () => ((await mcp.ok("list_tasks", {})).tasks as { id: string; status: string }[]).map((t) => `${t.id}:${t.status}`).sort();
    assert.equal(await ids(), ["t-0:todo", "t-1:todo", "t-2:todo"]);
    ok(cli(["task", "add", "new one", "--id", "fresh"], { cwd: repo, agent: "lead" }));
    ok(cli(["claim", "t-1"], { cwd: repo, agent: "bob" }));
    assert.equal(await ids(), ["fresh:todo", "t-0:todo", "t-1:claimed", "t-2:todo"], "a task added and one claimed by the CLI show at once");
    // Refs moved into packed-refs (their loose files removed), then one changed again.
    gitOut(repo, "pack-refs", "--all");
    assert.equal(await ids(), ["fresh:todo", "t-0:todo", "t-1:claimed", "t-2:todo"]);
    ok(cli(["release", "t-1"], { cwd: repo, agent: "bob" }));
    ok(cli(["claim", "t-2"], { cwd: repo, agent: "bob" }));
    assert.equal(await ids(), ["fresh:todo", "t-0:todo", "t-1:todo", "t-2:claimed"]);
    // The server's own claim shows in its very next listing.
    await mcp.ok("claim_task", { id: "t-0" });
    assert.equal(await ids(), ["fresh:todo", "t-0:claimed", "t-1:todo", "t-2:claimed"]);
    const next = await mcp.ok("claim_next", { over_capacity: true });
    // Best first is priority: t-2 (2) is bob's now, t-1 (1) was released by bob meanwhile.
    assert.is(next.task.id, "t-1", "claim_next decides on what others changed since the server last looked");
  } finally {
    await mcp.close();
  }
});

test("a refused transaction (stale, locked) leaves a warm store able to write the next one", async () => {
  const repo = tempRepo();
  await seed(repo, 1);
  const store = await openSyncedStore({ cwd: repo, agent: "server", warm: true });
  try {
    const tip = gitOut(repo, "rev-parse", "refs/handoff/tasks/t-0");
    const stale = await store.updateRefs([{ ref: "refs/handoff/mine", new: tip, old: tip }]);
    assert.equal(stale.ok ? "ok" : stale.reason, "stale");
    const lock = join(repo, ".git/refs/handoff/tasks/t-0.lock");
    writeFileSync(lock, "");
    const locked = await store.updateRefs([{ ref: "refs/handoff/tasks/t-0", new: null, old: tip }]);
    assert.equal(locked.ok ? "ok" : locked.reason, "locked");
    rmSync(lock);
    // One git refuses itself (an object that does not exist): that update-ref process ends.
    const missing = await store.updateRefs([{ ref: "refs/handoff/mine", new: "12".repeat(20), old: null }]);
    assert.equal(missing.ok ? "ok" : missing.reason, "missing_object");
    const created = await store.updateRefs([{ ref: "refs/handoff/mine", new: tip, old: null }]);
    assert.ok(created.ok, JSON.stringify(created));
    assert.is(gitOut(repo, "rev-parse", "refs/handoff/mine"), tip);
    for (let i = 0; i < 3; i++) {
      const lost = await store.updateRefs([{ ref: "refs/handoff/mine", new: null, old: null }]);
      assert.is(lost.ok, false);
    }
    const deleted = await store.updateRefs([{ ref: "refs/handoff/mine", new: null, old: tip }]);
    assert.ok(deleted.ok, JSON.stringify(deleted));
  } finally {
    store.close();
  }
});

test.run();
