// What the dashboard's server sends is bounded by what the page shows (src/dashboard/bound.ts), and
// a rebuild with nothing moved asks git for nothing: at 10,000 tasks and 100 agents each push was
// ~8 MB of JSON, and every rebuild started a `git merge-base` and a `git diff` per agent (~6 s of
// a ~9 s rebuild). Merge previews are shared with `status` through its cache file.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { boundCards, boundGraph, boundLeases, boundRows, type GraphEdge } from "../src/dashboard/bound.ts";
import { buildSnapshot, type SnapshotCache } from "../src/dashboard/snapshot.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanEnv, cleanupTemp, cli, tempDir } from "./support/repo.ts";
import { fixtureNow, viewsRepo } from "./support/views-fixture.ts";

test.after(cleanupTemp);

const edge = (task: string, on: string, blocked = true): GraphEdge => ({ task, on, blocked, status: "todo", task_status: "todo" });

test("the graph: a chain of 10,000 keeps its first 12 layers; a wide layer its first tasks by id; a cycle ends", () => {
  const chain = Array.from({ length: 9_999 }, (_, i) => edge(`t-${i + 1}`, `t-${i}`, i % 2 === 0));
  const part = boundGraph(chain);
  assert.equal(part.edges.map((e) => e.task), Array.from({ length: 11 }, (_, i) => `t-${i + 1}`));
  assert.equal([part.nodes_total, part.edges_total, part.blocking_total], [10_000, 9_999, 5_000]);

  // 500 tasks wait on one: the root and the first 199 of them by id.
  const wide = Array.from({ length: 500 }, (_, i) => edge(`w-${String(i).padStart(3, "0")}`, "root"));
  const drawn = boundGraph(wide).edges;
  assert.is(drawn.length, 199);
  assert.is(drawn.at(-1)!.task, "w-198");

  // A task whose layer is deep is left out with everything after it, never drawn without what it waits on.
  const mixed = [...chain.slice(0, 20), edge("side", "t-3")];
  const shown = new Set(boundGraph(mixed).edges.flatMap((e) => [e.task, e.on]));
  assert.ok(shown.has("side") && shown.has("t-3") && shown.has("t-11") && !shown.has("t-12"));

  const cycle = boundGraph([edge("a", "b"), edge("b", "a"), edge("c", "a")]);
  assert.is(cycle.nodes_total, 3);
  assert.is(cycle.edges.length, 3);
});

test("cards: the first 200 of each state by priority then id, in the order given; rows busy first; flagged leases first", () => {
  const cards = [
    ...Array.from({ length: 250 }, (_, i) => ({ id: `t-${String(i).padStart(3, "0")}`, status: "todo" as const, priority: i >= 200 ? 5 : 0 })),
    { id: "c-1", status: "claimed" as const, priority: 0 },
  ];
  const kept = boundCards(cards);
  assert.is(kept.length, 201);
  assert.equal(kept.slice(0, 3).map((c) => c.id), ["t-000", "t-001", "t-002"], "in the order given");
  assert.ok(kept.some((c) => c.id === "t-249") && !kept.some((c) => c.id === "t-199") && kept.some((c) => c.id === "c-1"));

  const rows = Array.from({ length: 400 }, (_, i) => ({ task: `r-${i}`, cells: i >= 390 ? ["holds"] : [null] }));
  const shownRows = boundRows(rows);
  assert.is(shownRows.length, 300);
  assert.equal(shownRows.slice(0, 10).map((r) => r.task), Array.from({ length: 10 }, (_, i) => `r-${390 + i}`));

  const leases = Array.from({ length: 600 }, (_, i) => ({ id: i, flag: i >= 590 ? { kind: "task_finished" } : null }));
  const shownLeases = boundLeases(leases);
  assert.is(shownLeases.length, 500);
  assert.is(shownLeases.filter((l) => l.flag).length, 10);
  assert.is(shownLeases[489]!.id, 489);
});

/** The git commands run while `fn` runs in this process (GIT_TRACE), by name. */
async function gitCommands(fn: () => Promise<unknown>): Promise<string[]> {
  const trace = join(tempDir("handoff-trace-"), "trace");
  process.env.GIT_TRACE = trace;
  try {
    await fn();
  } finally {
    delete process.env.GIT_TRACE;
  }
  let text = "";
  try {
    text = readFileSync(trace, "utf8");
  } catch {
    /* no git process */
  }
  return text.split("\n").filter((l) => l.includes("trace: built-in: git ")).map((l) => l.split("trace: built-in: git ")[1]!.split(" ")[0]!);
}

test("a busy repository: the state is bounded with its totals, a rebuild asks git for nothing, merges are shared with status", async () => {
  const f = { tasks: 1200, agents: 20, events: 2400, branches: 6 };
  const repo = viewsRepo(f);
  const env = cleanEnv({ HANDOFF_NOW: fixtureNow(f) });
  // status merges the branch pairs first and keeps them in its cache file.
  const status = cli(["status", "--json"], { cwd: repo, agent: "agent-000", env: { HANDOFF_NOW: fixtureNow(f) } });
  assert.is(status.code, 0, status.stderr);
  const merged = JSON.parse(readFileSync(join(repo, ".git", "handoff", "merge-preview.json"), "utf8")).pairs;
  assert.ok(Object.keys(merged).length >= 15, "the fixture's six branches are merged pairwise");
  assert.is(status.json.predicted_conflicts.conflicting, 1, "agent-000 and agent-005 both change src/shared.ts");

  const cache: SnapshotCache = { merges: new Map(), commits: new Map(), lastSync: null, answers: new Map(), mergeFile: true };
  const build = async () => {
    const store = await openSyncedStore({ cwd: repo, agent: "agent-000", env });
    try {
      return await buildSnapshot(store, cache, true);
    } finally {
      store.close();
    }
  };
  let first: Awaited<ReturnType<typeof build>> | undefined;
  const firstCommands = await gitCommands(async () => (first = await build()));
  assert.not.ok(firstCommands.includes("merge-tree"), `the pairs status merged are read from its file: ${firstCommands.join(" ")}`);
  const snap = first!;
  const all = status.json;
  const counts = Object.values(snap.status.counts).reduce((a: number, b) => a + (b as number), 0);
  assert.is(snap.totals.tasks, counts);
  assert.is(snap.totals.tasks, f.tasks);
  for (const [st, n] of Object.entries(snap.status.counts)) assert.is(snap.tasks.filter((t) => t.status === st).length, Math.min(n as number, 200), st);
  assert.ok(snap.status.counts.todo > 200, "a column is cut");
  assert.is(snap.status.matrix.total, all.matrix.rows.length);
  assert.is(snap.status.matrix.rows.length, Math.min(300, all.matrix.total));
  assert.is(snap.totals.stuck, all.drift.stuck.length);
  assert.ok(snap.drift.stuck.length <= 300);
  assert.is(snap.totals.leases, all.leases.length);
  assert.not.ok("holders" in snap.status, "claims by holder are the matrix's");
  assert.ok(JSON.stringify(snap).length < 400_000, `${JSON.stringify(snap).length} bytes`);

  // Nothing moved: no merge, no merge base, no diff, no git process at all.
  assert.equal(await gitCommands(build), []);
});

test.run();
