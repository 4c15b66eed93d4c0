// Test support for the CLI claim races (task-races-claim and task-races-next): RACERS real CLI
// processes started at once against one repository, and the check that a race for one task had
// exactly one winner.
import * as assert from "uvu/assert";
import { cliAsync, gitOut, type CliResult } from "./repo.ts";

export const RACERS = 16;

/**
 * Starts RACERS claims of `id` at once, spread over `cwds`; returns [agent, result] pairs. Each
 * racer may win several of the tasks raced for, one after the other: past its capacity.
 */
export async function race(id: string, cwds: string[], args: string[] = ["claim", id, "--json", "--over-capacity"]): Promise<[string, CliResult][]> {
  const runs = Array.from({ length: RACERS }, (_, i) => {
    const agent = `racer-${i}`;
    return cliAsync(args, { cwd: cwds[i % cwds.length]!, agent }).then((r) => [agent, r] as [string, CliResult]);
  });
  return Promise.all(runs);
}

/** Exactly one winner, every loser exits 3 and is told who won; the ref has exactly one `claimed`. */
export function checkRace(repo: string, id: string, results: [string, CliResult][]): void {
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
