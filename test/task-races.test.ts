// Many real processes racing for the same task: compare-and-swap must grant each task once.
import { spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanEnv, cleanupTemp, cli, cliAsync, gitOut, seedTasks, tempDir, tempRepo, type CliResult } from "./support/repo.ts";
import { bundled } from "./support/bundle.ts";

test.after(cleanupTemp);

const RACERS = 16;

/** Starts RACERS claims of `id` at once, spread over `cwds`; returns [agent, result] pairs. */
/** Each racer may win several of the tasks raced for, one after the other: past its capacity. */
async function race(id: string, cwds: string[], args: string[] = ["claim", id, "--json", "--over-capacity"]): Promise<[string, CliResult][]> {
  const runs = Array.from({ length: RACERS }, (_, i) => {
    const agent = `racer-${i}`;
    return cliAsync(args, { cwd: cwds[i % cwds.length]!, agent }).then((r) => [agent, r] as [string, CliResult]);
  });
  return Promise.all(runs);
}

/** Exactly one winner, every loser exits 3 and is told who won; the ref has exactly one `claimed`. */
function checkRace(repo: string, id: string, results: [string, CliResult][]): void {
  const winners = results.filter(([, r]) => r.code === 0);
  assert.is(winners.length, 1, `task ${id}: ${winners.length} winners: ${results.map(([a, r]) => `${a}=${r.code} ${r.stderr.trim()}`).join(" | ")}`);
  const [winner, won] = winners[0]!;
  assert.is(won.json.claim.agent, winner);
  assert.is(won.json.claim.fence, 1);
  for (const [agent, r] of results) {
    if (agent === winner) continue;
    assert.is(r.code, 3, `${agent} on ${id}: exit ${r.code}: ${r.stderr}`);
    assert.is(r.json.error.code, "held_by_other", `${agent} on ${id}: ${r.stderr}`);
    assert.is(r.json.error.data.holder, winner);
    assert.match(r.stderr, new RegExp(`task ${id} is held by ${winner}\\b`));
  }
  const log = gitOut(repo, "log", "--format=%an %s", `refs/handoff/tasks/${id}`).split("\n");
  assert.is(log.filter((l) => / claimed /.test(l)).length, 1, `history of ${id}:\n${log.join("\n")}`);
  assert.is(log.length, 2);
  assert.ok(log[0]!.startsWith(`${winner} claimed ${id} by ${winner}`), log[0]);
}

test(`${RACERS} CLI processes claim the same task at once, over 4 tasks: one winner each, the losers told who won`, async () => {
  const repo = tempRepo();
  const ids = Array.from({ length: 4 }, (_, i) => `race-${i}`);
  await seedTasks(repo, ids.map((id) => ({ id })));
  for (const id of ids) checkRace(repo, id, await race(id, [repo]));
  const claimed = cli(["tasks", "--status", "claimed", "--json"], { cwd: repo, agent: "lead" }).json;
  assert.is(claimed.length, 4);
});

const RACER = resolve(import.meta.dirname, "support/racer.ts");

/** One process claiming each task in turn through the store (the CLI's own path), one JSON line per attempt. */
function racer(repo: string, agent: string, ids: string[]): Promise<{ id: string; ok: boolean; holder: string | null; code?: string }[]> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [bundled(RACER), repo, agent, ...ids], { env: cleanEnv(), cwd: resolve(import.meta.dirname, "..") });
    let out = "";
    let err = "";
    child.stdout.on("data", (b) => (out += b));
    child.stderr.on("data", (b) => (err += b));
    child.on("close", (code) => (code === 0 ? res(out.trim().split("\n").map((l) => JSON.parse(l))) : rej(new Error(`racer ${agent} exited ${code}: ${err}`))));
  });
}

test(`${RACERS} processes race through 50 tasks in the same order: exactly one grant per task`, async () => {
  const repo = tempRepo();
  const ids = Array.from({ length: 50 }, (_, i) => `bulk-${i}`);
  await seedTasks(repo, ids.map((id) => ({ id })));
  const all = await Promise.all(Array.from({ length: RACERS }, (_, i) => racer(repo, `racer-${i}`, ids)));
  for (const id of ids) {
    const attempts = all.map((r, i) => ({ agent: `racer-${i}`, ...r.find((a) => a.id === id)! }));
    const winners = attempts.filter((a) => a.ok);
    assert.is(winners.length, 1, `${id}: ${winners.map((w) => w.agent).join(", ")}`);
    for (const loser of attempts.filter((a) => !a.ok)) {
      assert.is(loser.code, "held_by_other", `${id} ${loser.agent}`);
      assert.is(loser.holder, winners[0]!.agent);
    }
    const claims = gitOut(repo, "log", "--format=%s", `refs/handoff/tasks/${id}`).split("\n").filter((l) => l.startsWith("claimed "));
    assert.is(claims.length, 1, `${id}: one claimed commit`);
  }
});

test("the same race split across two linked worktrees of one repo", async () => {
  const repo = tempRepo();
  const wt = join(tempDir(), "other-wt");
  gitOut(repo, "worktree", "add", "-q", "-b", "other", wt);
  const ids = Array.from({ length: 4 }, (_, i) => `wt-race-${i}`);
  await seedTasks(wt, ids.map((id) => ({ id })));
  const branches = new Set<string>();
  for (const id of ids) {
    const results = await race(id, [repo, wt]);
    checkRace(repo, id, results);
    branches.add(results.find(([, r]) => r.code === 0)![1].json.claim.branch);
  }
  // both worktrees see the one ref, and the winners came from both sides over the run
  assert.is(gitOut(wt, "rev-parse", "refs/handoff/tasks/wt-race-0"), gitOut(repo, "rev-parse", "refs/handoff/tasks/wt-race-0"));
  assert.ok([...branches].every((b) => b === "main" || b === "other"));
});

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
