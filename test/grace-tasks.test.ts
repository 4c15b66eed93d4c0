// The task views agree with the writes about the takeover grace: through a sync remote, another
// agent's claim expired by this clock still stands for max_clock_skew past its expiry, and a claim
// of the task is refused until then (clock-skew-leases.test.ts). So `task list` and `task show`
// (text and --json), `ready` and `claim --next`, `status`, the dashboard's board and MCP's
// list_tasks, get_task and overview show it held, marked with when it stops standing, and free
// past the grace. The caller's own expired claim is free at once: the grace is for other clocks.
// grace-views.test.ts does the same for the lease views.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { validUntil } from "../src/dashboard/snapshot.ts";
import { overStdio } from "./support/mcp.ts";
import { cleanupTemp, cli, gitOut, seedTasks } from "./support/repo.ts";
import { storeClaim, storeLease, storeSync, storeTasks } from "./support/seed.ts";
import { at, dashboardText, GRACE_END, INSIDE, PAST, snapshotAt, T, twoClones } from "./support/grace-clock.ts";

test.after(cleanupTemp);

const MARK = /expired 30s ago by this clock, stands for the takeover grace \(clock skew\) until 2026-11-30T09:02:00\.000Z \(in 30s\)/;

/**
 * One remote and two clones: in b, bob adds t (priority 5) and u, and claims t for one minute from
 * T, and leases docs/x.md as long; in a, alice adds and claims her own m for one minute from T + 20s (expired at INSIDE, 10 s
 * ago) and syncs bob's state at INSIDE, 30 s past bob's expiry by her clock. Made once, before the
 * tests, in-process (support/seed.ts): the tests read it, the ones that write come last.
 */
let made: { a: string } | null = null;
test.before(async () => {
  const { a, b } = twoClones("grace-tasks");
  const bob = { cwd: b, agent: "bob", now: new Date(T).toISOString(), push: true };
  await storeTasks(bob, [
    { id: "t", objective: "bob's work", priority: 5 },
    { id: "u", objective: "free work" },
  ]);
  await storeClaim(bob, "t", { ttl: "1m" });
  await storeLease({ ...bob, push: false }, ["docs/x.md"], { ttl: "1m" });
  await storeSync(bob);
  const early = { cwd: a, agent: "alice", now: new Date(T + 20_000).toISOString() };
  await storeTasks(early, [{ id: "m", objective: "alice's own" }]);
  await storeClaim(early, "m", { ttl: "1m" });
  await storeSync({ cwd: a, agent: "alice", now: new Date(INSIDE).toISOString() });
  assert.match(gitOut(a, "show", "refs/handoff/tasks/t:task.json"), /"status": *"claimed"/, "bob's claim is stored as it was written");
  made = { a };
});
function setup(): { a: string } {
  if (!made) throw new Error("the shared clones are made in test.before");
  return made;
}

const alice = (args: string[], ms: number) => cli(args, { cwd: setup().a, agent: "alice", env: at(ms) });
const rows = (ms: number, ...more: string[]) => (alice(["task", "list", "--json", ...more], ms).json as any[]).map((t) => `${t.id}:${t.status}:${t.claim?.agent ?? "-"}:${t.grace_until ?? "-"}`);

test("task list and task show: another agent's claim inside the grace is held, with grace_until and a mark; the caller's own expired claim is free; past the grace bob's is free too", () => {
  const held = [`m:todo:-:-`, `t:claimed:bob:${GRACE_END}`, `u:todo:-:-`];
  assert.equal(rows(INSIDE).sort(), held);
  assert.equal(rows(INSIDE, "--limit", "10").sort(), held, "the bounded listing (--limit) agrees");
  assert.equal(rows(INSIDE, "--status", "claimed", "--limit", "10"), [`t:claimed:bob:${GRACE_END}`]);
  assert.equal(rows(INSIDE, "--status", "todo", "--limit", "10"), [`u:todo:-:-`, `m:todo:-:-`], "best first, t not among the free ones");
  const text = alice(["task", "list"], INSIDE);
  assert.is(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`t\\s+claimed\\s+p5\\s+bob's work\\s+bob \\(${MARK.source}\\)`));
  assert.match(text.stdout, /m\s+todo/, "alice's own expired claim is free at once");
  const show = alice(["task", "show", "t", "--json"], INSIDE);
  assert.is(show.code, 0, show.stderr);
  assert.is(show.json.status, "claimed");
  assert.is(show.json.grace_until, GRACE_END);
  assert.is(show.json.attempts, 0, "not counted as an expiry");
  const detail = alice(["task", "show", "t"], INSIDE).stdout;
  assert.match(detail, /holder:\s+bob/);
  assert.match(detail, new RegExp(`lease:\\s+${MARK.source}`));
  // The write agrees: alice may not claim what is shown as bob's.
  assert.is(alice(["claim", "t"], INSIDE).code, 3);
  assert.equal(rows(PAST).sort(), [`m:todo:-:-`, `t:todo:-:-`, `u:todo:-:-`], "past the grace nothing stands");
  assert.not.ok("grace_until" in alice(["task", "show", "t", "--json"], PAST).json);
});

test("ready: another agent's claim inside the grace is not offered; past the grace it is", () => {
  const ids = (ms: number) => (alice(["ready", "--json"], ms).json as any[]).map((t) => t.id);
  assert.equal(ids(INSIDE), ["u", "m"]);
  assert.equal(ids(PAST), ["t", "u", "m"]);
});

test("status: another agent's claim inside the grace is held (counts, held with grace_until and a mark, the matrix, its holder), not free to claim; the caller's own expired claim is", () => {
  const json = alice(["status", "--json", "--no-conflicts"], INSIDE);
  assert.is(json.code, 0, json.stderr);
  const v = json.json;
  assert.is(v.counts.claimed, 1);
  assert.is(v.counts.todo, 2);
  assert.equal(v.holders.map((h: any) => `${h.agent}:${h.tasks.map((t: any) => `${t.task}:${t.grace_until}`).join(",")}`), [`bob:t:${GRACE_END}`]);
  assert.equal(v.expired.map((t: any) => `${t.agent}:${t.task}`), ["alice:m"], "only alice's own expired claim is free to claim");
  assert.equal(v.roster.undeclared_holders, [{ agent: "bob", claimed: ["t"] }]);
  const row = v.matrix.rows.find((r: any) => r.task === "t");
  assert.is(row.status, "claimed");
  assert.is(row.cells[v.matrix.agents.indexOf("bob")], "holds");
  const text = alice(["status", "--no-conflicts"], INSIDE);
  assert.is(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`held\\n\\s+bob\\s+t\\s+${MARK.source}`));
  assert.match(text.stdout, /expired \(free to claim\)\n\s+m\s+alice lease ran out 10s ago\n/);
  const past = alice(["status", "--json", "--no-conflicts"], PAST).json;
  assert.equal(past.holders, []);
  assert.equal(past.expired.map((t: any) => t.task).sort(), ["m", "t"]);
});

test("the dashboard's board: another agent's claim inside the grace is held, with grace_until in the state and a mark on the page, and the state is built again when the grace ends", async () => {
  const snapshot = (ms: number) => snapshotAt(setup().a, ms);
  const inside = await snapshot(INSIDE);
  const cards = (s: typeof inside) => s.tasks.map((c) => `${c.id}:${c.status}:${c.holder ?? "-"}:${c.grace_until ?? "-"}`).sort();
  assert.equal(cards(inside), ["m:todo:alice:-", `t:claimed:bob:${GRACE_END}`, "u:todo:-:-"]);
  assert.is(inside.status.counts.claimed, 1);
  assert.is(inside.status.matrix.rows.find((r) => r.task === "t")!.cells[inside.status.matrix.agents.indexOf("bob")], "holds");
  // bob's lease of docs/x.md ends its grace then too: the claim alone must say so.
  assert.is(validUntil({ ...inside, leases: [] }, 3_600_000), T + 120_000, "the server looks again when the grace ends");
  assert.equal(cards(await snapshot(PAST)), ["m:todo:alice:-", "t:todo:bob:-", "u:todo:-:-"], "past the grace the card is free (its stored claim shown stale, to reclaim)");
  // The page marks the card (a real browser, as dashboard-browser.test.ts).
  const card = await dashboardText(setup().a, "board", '.card[data-task="t"]');
  assert.match(card, /held by bob.*stands for the takeover grace \(clock skew\) until 2026-11-30T09:02:00\.000Z/s);
});

test("MCP get_task, list_tasks, overview, ready_tasks, watch and load_context show another agent's claim inside the grace as held, with grace_until", async () => {
  const mcp = await overStdio(setup().a, { agent: "alice", env: at(INSIDE) });
  try {
    const got = await mcp.call("get_task", { id: "t" });
    assert.not.ok(got.isError, JSON.stringify(got.content));
    const task = (got.structuredContent as any).task;
    assert.is(`${task.status}:${task.grace_until}`, `claimed:${GRACE_END}`);
    assert.match((got.content[0] as { text: string }).text, MARK);
    const listed = await mcp.call("list_tasks", {});
    assert.not.ok(listed.isError, JSON.stringify(listed.content));
    assert.equal(((listed.structuredContent as any).tasks as any[]).map((t) => `${t.id}:${t.status}:${t.grace_until ?? "-"}`), ["t:claimed:" + GRACE_END, "u:todo:-", "m:todo:-"]);
    const ov = await mcp.call("overview", {});
    assert.not.ok(ov.isError, JSON.stringify(ov.content));
    const o = (ov.structuredContent as any).overview ?? ov.structuredContent;
    assert.equal(o.holders.map((h: any) => `${h.agent}:${h.tasks.map((t: any) => `${t.task}:${t.grace_until}`).join(",")}`), [`bob:t:${GRACE_END}`]);
    assert.equal(o.expired.map((t: any) => t.task), ["m"]);
    const ready = await mcp.call("ready_tasks", {});
    assert.equal(((ready.structuredContent as any).tasks as any[]).map((t) => t.id), ["u", "m"]);
    const watched = await mcp.call("watch", { timeout_seconds: 1 });
    assert.not.ok(watched.isError, JSON.stringify(watched.content));
    assert.equal(((watched.structuredContent as any).ready as any[]).map((t) => t.id), ["u", "m"]);
    // Last: it records alice's session.
    const context = await mcp.call("load_context", {});
    assert.not.ok(context.isError, JSON.stringify(context.content));
    assert.equal(((context.structuredContent as any).ready as any[]).map((t) => t.id), ["u", "m"]);
  } finally {
    await mcp.close();
  }
});

test("agents and MCP list_agents count another agent's claim inside the grace as held by it; past the grace it holds nothing", async () => {
  const holds = (ms: number) => {
    const r = alice(["agents", "--json"], ms);
    assert.is(r.code, 0, r.stderr);
    const where = [...r.json.agents, ...r.json.undeclared_holders].find((x: { agent: string }) => x.agent === "bob");
    return where ? where.claimed : [];
  };
  assert.equal(holds(INSIDE), ["t"]);
  assert.equal(holds(PAST), [], "past the grace nothing stands");
  const mcp = await overStdio(setup().a, { agent: "alice", env: at(INSIDE) });
  try {
    const r = (await mcp.ok("list_agents", {})) as { agents: { agent: string; claimed: string[] }[]; undeclared_holders: { agent: string; claimed: string[] }[] };
    assert.equal([...r.agents, ...r.undeclared_holders].find((x) => x.agent === "bob")?.claimed, ["t"]);
  } finally {
    await mcp.close();
  }
});

test("ask --release: another agent's claim or lease inside the grace can be asked for (a claim or lease of it is refused), not 'holds no task or lease'", () => {
  const past = alice(["ask", "bob", "--release", "t"], PAST);
  assert.match(past.stderr, /bob holds no task or lease t\b.*\[not_found\]/, "past the grace bob holds nothing");
  const r = alice(["ask", "bob", "--release", "t", "--json"], INSIDE);
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.is(r.json.task, "t");
  const path = alice(["ask", "bob", "--release", "docs/x.md", "--json"], INSIDE);
  assert.is(path.code, 0, path.stdout + path.stderr);
  assert.equal(path.json.paths, ["docs/x.md"]);
});

test("claim --next passes another agent's claim inside the grace over without trying it (no race counted as lost to its holder)", () => {
  const { a } = setup();
  const r = alice(["claim", "--next", "--json"], INSIDE);
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.is(r.json.task?.id ?? r.json.id, "u");
  const rivals = join(a, ".git/handoff/rivals");
  assert.not.ok(existsSync(rivals) && /bob/.test(readFileSync(rivals, "utf8")), "bob noted as a rival who beat this clone to a task");
});

test("one-shot listings from the task order file (500 tasks and more) agree: ready and task list --limit", async () => {
  const { a } = setup();
  await seedTasks(a, Array.from({ length: 500 }, (_, i) => ({ id: `s${String(i).padStart(3, "0")}` })));
  assert.ok(alice(["task", "list", "--status", "claimed", "--limit", "5", "--json"], INSIDE).code === 0);
  assert.ok(existsSync(join(a, ".git/handoff/task-order.json")), "the listing read the task order file");
  assert.equal(rows(INSIDE, "--status", "claimed", "--limit", "5"), [`t:claimed:bob:${GRACE_END}`, `u:claimed:alice:-`]);
  assert.equal(rows(INSIDE, "--limit", "600").filter((r) => r.startsWith("t:")), [`t:claimed:bob:${GRACE_END}`]);
  const ready = (alice(["ready", "--json"], INSIDE).json as any[]).map((t) => t.id);
  assert.is(ready.length, 501);
  assert.not.ok(ready.includes("t"));
  assert.ok((alice(["ready", "--json"], PAST).json as any[]).some((t) => t.id === "t"), "past the grace it is ready");
});

test("a task waiting on another agent's claim inside the grace: status and MCP ready_tasks name the blocker claimed by its holder, not todo", async () => {
  const { a } = setup();
  await storeTasks({ cwd: a, agent: "alice", now: new Date(INSIDE).toISOString() }, [{ id: "w", after: ["t"] }]);
  const edges = (ms: number) => (alice(["status", "--json", "--no-conflicts"], ms).json.blocked as any[]).filter((e) => e.task === "w").map((e) => `${e.waits_on}:${e.status}:${e.holder ?? "-"}`);
  assert.equal(edges(INSIDE), ["t:claimed:bob"]);
  assert.equal(edges(PAST), ["t:todo:-"], "past the grace the blocker is free");
  const mcp = await overStdio(a, { agent: "alice", env: at(INSIDE) });
  try {
    const r = (await mcp.ok("ready_tasks", {})) as { blocked: { task: string; edges: { waits_on: string; status: string; holder: string | null }[] }[] };
    assert.equal(r.blocked.find((b) => b.task === "w")?.edges.map((e) => `${e.waits_on}:${e.status}:${e.holder ?? "-"}`), ["t:claimed:bob"]);
  } finally {
    await mcp.close();
  }
});

test.run();
