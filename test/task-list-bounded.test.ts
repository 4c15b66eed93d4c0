// Bounded listings: `task list --limit N` and list_tasks return N tasks in the order their status
// calls for (ready work best first, history newest first, otherwise oldest first) with the total
// of all that match; a one-shot process keeps decoded records in .git/handoff/tasks.cache, and a
// torn or foreign line there is read again from git, never trusted blindly.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { inProcess } from "./support/mcp.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { storeClaim, storeDone, storeTasks } from "./support/seed.ts";
import { tasksCacheFile } from "../src/store/record-cache.ts";

test.after(cleanupTemp);

const T0 = Date.parse("2030-01-01T00:00:00.000Z");
const at = (min: number) => ({ HANDOFF_NOW: new Date(T0 + min * 60_000).toISOString() });
const run = (repo: string, agent: string, min: number, args: string[]) => {
  const r = cli(args, { cwd: repo, agent, env: at(min) });
  assert.is(r.code, 0, `${args.join(" ")}: ${r.stdout}\n${r.stderr}`);
  return r;
};
const ids = (r: ReturnType<typeof cli>) => (r.json as { id: string }[]).map((t) => t.id);

/** Written through the store (seed.ts) at the minutes the listings order by. */
async function project(): Promise<string> {
  const repo = tempRepo();
  const by = (agent: string, min: number) => ({ cwd: repo, agent, now: at(min).HANDOFF_NOW });
  // Oldest first: a, b, c, d, e; priorities make c and e the best.
  const prio: Record<string, number> = { a: 0, b: 1, c: 5, d: 0, e: 5 };
  for (const [i, [id, p]] of Object.entries(prio).entries()) await storeTasks(by("lead", i), [{ id, objective: `task ${id}`, priority: p }]);
  // History: b done first, then d, then a.
  for (const [id, min] of [["b", 10], ["d", 11], ["a", 12]] as const) {
    await storeClaim(by("bob", min), id);
    await storeDone(by("bob", min), id);
  }
  return repo;
}

test("task list --limit: ready work best first, history newest first, otherwise oldest first", async () => {
  const repo = await project();
  assert.equal(ids(run(repo, "x", 20, ["task", "list", "--status", "todo", "--limit", "2", "--json"])), ["c", "e"], "best first: highest priority, then oldest");
  assert.equal(ids(run(repo, "x", 20, ["task", "list", "--status", "done", "--limit", "2", "--json"])), ["a", "d"], "newest first");
  assert.equal(ids(run(repo, "x", 20, ["task", "list", "--limit", "3", "--json"])), ["a", "b", "c"], "no status: oldest first, as without --limit");
  assert.equal(ids(run(repo, "x", 20, ["task", "list", "--status", "done", "--json"])), ["a", "b", "d"], "without --limit nothing changes");
  const text = run(repo, "x", 20, ["task", "list", "--status", "done", "--limit", "1"]).stdout;
  assert.match(text, /\(2 more, newest first; raise --limit\)/);
  // With --json the array stays as it was; what the limit left out is said on stderr.
  const cut = run(repo, "x", 20, ["task", "list", "--status", "done", "--limit", "1", "--json"]);
  assert.equal(ids(cut), ["a"]);
  assert.is(cut.stderr, "git-handoff: (2 more, newest first; raise --limit)\n");
  assert.is(run(repo, "x", 20, ["task", "list", "--status", "done", "--limit", "3", "--json"]).stderr, "", "nothing left out, nothing said");
  const ready = run(repo, "x", 20, ["ready", "--limit", "1", "--json"]);
  assert.equal(ids(ready), ["c"]);
  assert.is(ready.stderr, "git-handoff: (1 more ready, best first; raise --limit)\n");
  const bad = cli(["task", "list", "--limit", "0"], { cwd: repo, agent: "x" });
  assert.is(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /--limit/);
  const help = cli(["task", "list", "--help"], { cwd: repo, agent: "x" }).stdout;
  assert.match(help, /best first/);
  assert.match(help, /newest first/);
});

test("list_tasks returns at most limit, in the order of its status, with the total", async () => {
  const repo = await project();
  const mcp = await inProcess(repo, { agent: "x", env: at(20) });
  try {
    const todo = await mcp.ok("list_tasks", { status: "todo", limit: 1 });
    assert.equal(todo.tasks.map((t: { id: string }) => t.id), ["c"]);
    assert.is(todo.total, 2);
    const done = await mcp.ok("list_tasks", { status: "done", limit: 2 });
    assert.equal(done.tasks.map((t: { id: string }) => t.id), ["a", "d"]);
    assert.is(done.total, 3);
    const all = await mcp.ok("list_tasks", { limit: 100 });
    assert.equal(all.tasks.map((t: { id: string }) => t.id), ["a", "b", "c", "d", "e"]);
    // A claim whose lease ran out counts (and lists) as todo.
    run(repo, "bob", 20, ["claim", "e", "--ttl", "1m"]);
    const later = await inProcess(repo, { agent: "x", env: at(30) });
    try {
      const r = await later.ok("list_tasks", { status: "todo", limit: 5 });
      assert.equal(r.tasks.map((t: { id: string }) => t.id), ["c", "e"]);
      assert.is(r.tasks[1].claim, null);
    } finally {
      await later.close();
    }
  } finally {
    await mcp.close();
  }
});

test("one-shot listings keep decoded records on disk; a torn or foreign line is read again from git", async () => {
  const repo = await project();
  const cache = tasksCacheFile(join(repo, ".git"));
  const first = run(repo, "x", 20, ["task", "list", "--json"]).json;
  assert.ok(existsSync(cache), "the first listing leaves the cache");
  const lines = readFileSync(cache, "utf8").trim().split("\n");
  assert.ok(lines.length >= 5, `${lines.length} lines`);
  // Tear the line of task a's tip, and put something that is not a record in b's.
  const tipA = gitOut(repo, "rev-parse", "refs/handoff/tasks/a");
  const tipB = gitOut(repo, "rev-parse", "refs/handoff/tasks/b");
  const rest = lines.filter((l) => !l.startsWith(tipA) && !l.startsWith(tipB));
  writeFileSync(cache, [`${tipA}\t{"id": "tor`, `${tipB}\tnot json`, ...rest].join("\n") + "\n");
  assert.equal(run(repo, "x", 20, ["task", "list", "--json"]).json, first, "the same listing, read again from git where the cache is torn");
  const again = readFileSync(cache, "utf8");
  assert.not.match(again, /\{"id": "tor\n/, "the torn line was replaced");
  assert.match(again, new RegExp(`^${tipA}\t\\{"id":"a"`, "m"));
});

test.run();
