// The MCP tools mark what the sync remote holds from a newer git-handoff as the CLI does (one
// presentation for both): over a real SDK client on stdio, whose every result is checked against
// the published output schemas. check_files warns instead of calling a file free, list_leases marks
// each lease, get_task / list_tasks / load_context / overview mark such a task, and ready_tasks, load_context,
// claim_next and watch pass over the tasks whose claim would write such a ref, and say so.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { overStdio } from "./support/mcp.ts";
import { futureLeaseSet, futureTask, NEWER_LEASES, newerProjectSeeded } from "./support/newer-remote.ts";
import { storeClaim, storeSync, storeTasks } from "./support/seed.ts";
import { cleanupTemp, cli } from "./support/repo.ts";

test.after(cleanupTemp);

const STALE_TASK = /on origin from a newer git-handoff: this copy may be stale; upgrade to change it/;
const PASSED_OVER = /1 ready task\(s\) not listed \(s\): the remote holds them, or the lease set their scope needs, from a newer git-handoff/;

test("MCP tools mark tasks and leases held back as newer, and pass over what cannot be claimed here, as the CLI does", async () => {
  const { bare, a, b } = await newerProjectSeeded();
  // z: bob's, then rewritten by a newer git-handoff; s: ready, its claim would lease docs/** in the
  // lease set held back below; y: ready, claimable.
  await storeTasks({ cwd: a, agent: "alice", push: true }, [
    { id: "z", objective: "z" },
    { id: "s", objective: "s", priority: 9, scope: ["docs/**"] },
    { id: "y", objective: "y" },
  ]);
  await storeSync({ cwd: b, agent: "bob" });
  await storeClaim({ cwd: b, agent: "bob" }, "z", { ttl: "2h" });
  futureTask(bare, "z");
  futureLeaseSet(bare);
  assert.is(cli(["sync"], { cwd: b, agent: "bob" }).code, 3);

  const mcp = await overStdio(b, { agent: "bob" });
  try {
    // src/b.ts is free in b's stale copy, held exclusively by alice in the newer set.
    const c = await mcp.ok("check_files", { paths: ["src/b.ts"] });
    assert.is(c.verdict, "warn");
    assert.is(c.newer_on_remote, true);
    assert.match(c.paths[0].message, NEWER_LEASES);

    const l = await mcp.ok("list_leases");
    assert.equal(l.leases.map((x: any) => [x.pattern, x.newer_on_remote]), [["src/a.ts", true]]);
    assert.ok(l.notices?.some((n: string) => NEWER_LEASES.test(n)), JSON.stringify(l.notices));

    const z = await mcp.call("get_task", { id: "z" });
    assert.is((z.structuredContent as any).task.newer_on_remote, true);
    assert.match((z.content[0] as { text: string }).text, STALE_TASK);
    assert.is((await mcp.ok("get_task", { id: "y" })).task.newer_on_remote, undefined);

    const list = await mcp.call("list_tasks");
    assert.equal((list.structuredContent as any).tasks.map((t: any) => [t.id, !!t.newer_on_remote]).sort(), [["s", false], ["y", false], ["z", true]]);
    const lines = (list.content[0] as { text: string }).text.split("\n");
    assert.match(lines.find((x) => x.startsWith("z "))!, STALE_TASK);
    assert.not.match(lines.find((x) => x.startsWith("y "))!, STALE_TASK);

    const ready = await mcp.ok("ready_tasks");
    assert.equal(ready.tasks.map((t: any) => t.id), ["y"]);
    assert.ok(ready.notices?.some((n: string) => PASSED_OVER.test(n)), JSON.stringify(ready.notices));

    const ctx = await mcp.ok("load_context");
    assert.equal(ctx.claimed.map((t: any) => [t.id, t.newer_on_remote]), [["z", true]]);
    assert.equal(ctx.ready.map((t: any) => t.id), ["y"]);
    assert.ok(ctx.notices?.some((n: string) => PASSED_OVER.test(n)), JSON.stringify(ctx.notices));

    // The overview marks bob's claim on z, in its data and its text.
    const ov = await mcp.call("overview");
    const claims = (o: any) => o.holders.flatMap((h: any) => h.tasks.map((t: any) => [h.agent, t.task, t.newer_on_remote]));
    assert.equal(claims(ov.structuredContent), [["bob", "z", true]]);
    assert.match((ov.content[0] as { text: string }).text.split("\n").find((x) => /^ +bob +z /.test(x))!, STALE_TASK);
    assert.equal(claims(ctx.overview), [["bob", "z", true]], "load_context's overview is marked too");

    const claimed = await mcp.ok("claim_next", { over_capacity: true }); // bob holds z already
    assert.is(claimed.task.id, "y");
    assert.is(claimed.skipped_newer, 1);

    // Only s looks ready now, and it cannot be claimed here: watch keeps waiting instead of offering it.
    const w = await mcp.ok("watch", { timeout_seconds: 1 });
    assert.is(w.timed_out, true, JSON.stringify(w));
    assert.equal(w.ready, []);
  } finally {
    await mcp.close();
  }
});

test.run();
