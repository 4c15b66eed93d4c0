// `loop run` and the sync remote: nothing is pushed unless --push; with it, the integration branch
// is pushed after the merge (a plain push). Claims go through the remote as for any agent.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempDir } from "./support/repo.ts";
import { loopRepo } from "./support/loop.ts";

test.after(cleanupTemp);

test("without --push the remote's main stays; with --push it is the merged main; the tasks' claims went through the remote", async () => {
  const l = await loopRepo([]);
  const bare = tempDir("handoff-loop-remote-");
  gitOut(bare, "init", "-q", "--bare");
  gitOut(l.repo, "remote", "add", "origin", bare);
  gitOut(l.repo, "push", "-q", "origin", "main");
  const main0 = gitOut(l.repo, "rev-parse", "main");
  const add = (id: string) => assert.is(cli(["task", "add", `write ${id}.txt`, "--id", id, "--scope", `${id}.txt`, "--push"], { cwd: l.repo, agent: "lead" }).code, 0);
  add("quiet");
  const r = cli(["loop", "run", "--agent-cmd", l.agent, "--poll", "100ms", "--json"], { cwd: l.repo, agent: "lead", env: l.env });
  assert.is(r.code, 0, r.stderr);
  assert.is(r.json.units[0].phase, "merged");
  assert.ok(gitOut(l.repo, "rev-parse", "main") !== main0);
  assert.is(gitOut(bare, "rev-parse", "main"), main0, "nothing pushed without --push");
  // The claim was exclusive through the remote: the remote saw the unit's agent take the task.
  const claimed = gitOut(bare, "log", "--format=%an", "refs/handoff/tasks/quiet").split("\n");
  assert.ok(claimed.includes(`loop-${r.json.id}-u1`), claimed.join(","));
  add("loud");
  const p = cli(["loop", "run", "--agent-cmd", l.agent, "--push", "--poll", "100ms", "--json"], { cwd: l.repo, agent: "lead", env: l.env });
  assert.is(p.code, 0, p.stderr);
  assert.is(p.json.push, true);
  assert.match(p.json.units[0].note, "pushed main to origin");
  assert.is(gitOut(bare, "rev-parse", "main"), gitOut(l.repo, "rev-parse", "main"));
  assert.is(gitOut(bare, "show", "main:loud.txt"), `loud by loop-${p.json.id}-u1`);
});

test.run();
