// Many real processes racing for the same task: compare-and-swap must grant each task once.
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, cliAsync, gitOut, tempDir, tempRepo, type CliResult } from "./support/repo.ts";

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

/** Adds tasks a few at a time (create-only compare-and-swap on distinct refs), to keep setup short. */
async function addTasks(repo: string, ids: string[], extra: (i: number) => string[] = () => []): Promise<void> {
  for (let i = 0; i < ids.length; i += 8) {
    const batch = ids.slice(i, i + 8).map((id, j) => cliAsync(["task", "add", `contended ${id}`, "--id", id, ...extra(i + j)], { cwd: repo, agent: "lead" }));
    for (const r of await Promise.all(batch)) assert.is(r.code, 0, r.stderr);
  }
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

test(`${RACERS} processes claim the same task at once, over 50 tasks: one winner each`, async () => {
  const repo = tempRepo();
  const ids = Array.from({ length: 50 }, (_, i) => `race-${i}`);
  await addTasks(repo, ids);
  const winners = new Map<string, number>();
  for (const id of ids) {
    const results = await race(id, [repo]);
    checkRace(repo, id, results);
    const w = results.find(([, r]) => r.code === 0)![0];
    winners.set(w, (winners.get(w) ?? 0) + 1);
  }
  const claimed = cli(["tasks", "--status", "claimed", "--json"], { cwd: repo, agent: "lead" }).json;
  assert.is(claimed.length, 50);
});

test("the same race split across two linked worktrees of one repo", async () => {
  const repo = tempRepo();
  const wt = join(tempDir(), "other-wt");
  gitOut(repo, "worktree", "add", "-q", "-b", "other", wt);
  const ids = Array.from({ length: 6 }, (_, i) => `wt-race-${i}`);
  await addTasks(wt, ids);
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
  await addTasks(repo, pool, (i) => ["--priority", String(i % 3)]);
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

test.run();
