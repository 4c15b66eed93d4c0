// What a session loop planned stays planned for every clone that shows it: a change to the loop
// record that alters, drops or adds a planned unit, or a setting the loop started with, is refused
// on receive, by a clone that follows the loop and by one that sees it first; the loops `loop run`
// writes (phases moving, a second loop after the first) pass. The remote is written with git
// plumbing, as anyone with push access can.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { amendRecord } from "./support/forge.ts";
import { loopRepo } from "./support/loop.ts";
import { cleanupTemp, cli, gitOut, succeeded, tempDir } from "./support/repo.ts";
import { cloneOf } from "./support/servers.ts";

test.after(cleanupTemp);

const ok = succeeded;
const LOOP = "refs/handoff/loop";
const loopTip = (repo: string) => gitOut(repo, "for-each-ref", "--format=%(objectname)", LOOP);

/** A project on a bare remote whose lead ran one loop of two units, synced. */
async function ranOneLoop() {
  const l = await loopRepo([]);
  const bare = tempDir("handoff-loop-remote-");
  gitOut(bare, "init", "-q", "--bare");
  gitOut(l.repo, "remote", "add", "origin", bare);
  gitOut(l.repo, "push", "-q", "origin", "main");
  const add = (id: string) => ok(cli(["task", "add", `write ${id}.txt`, "--id", id, "--scope", `${id}.txt`, "--push"], { cwd: l.repo, agent: "lead" }));
  add("one");
  add("two");
  const observer = cloneOf(bare);
  ok(cli(["sync"], { cwd: observer, agent: "watcher" }));
  const run = () => {
    const r = ok(cli(["loop", "run", "--agent-cmd", l.agent, "--poll", "100ms", "--json"], { cwd: l.repo, agent: "lead", env: l.env }));
    ok(cli(["sync"], { cwd: l.repo, agent: "lead" }));
    return r.json;
  };
  return { l, bare, observer, add, run };
}

/** Refused by a clone that follows the loop (its loop ref stays) and by a fresh one (it gets none). */
function refusedEverywhere(bare: string, observer: string, reason: RegExp): void {
  const before = loopTip(observer);
  const s = cli(["sync", "--json"], { cwd: observer, agent: "watcher" });
  assert.is(s.code, 3, s.stderr);
  const q = (s.json.quarantined as { ref: string; reason: string }[]).find((x) => x.ref === LOOP);
  assert.match(q?.reason ?? JSON.stringify(s.json.quarantined), reason);
  assert.is(loopTip(observer), before, "the loop ref is as it was");
  const fresh = cloneOf(bare);
  const f = cli(["sync", "--json"], { cwd: fresh, agent: "newcomer" });
  assert.is(f.code, 3, f.stderr);
  const g = (f.json.quarantined as { ref: string; reason: string }[]).find((x) => x.ref === LOOP);
  assert.match(g?.reason ?? JSON.stringify(f.json.quarantined), reason);
  assert.is(loopTip(fresh), "", "a fresh clone takes no loop ref in");
}

test("loops as loop run writes them (a second one after the first) pass, followed or seen first", async () => {
  const { bare, observer, add, run } = await ranOneLoop();
  const first = run();
  assert.equal(first.units.map((u: { phase: string }) => u.phase), ["merged", "merged"]);
  ok(cli(["sync"], { cwd: observer, agent: "watcher" }));
  assert.is(loopTip(observer), gitOut(bare, "rev-parse", LOOP), "seen first: taken in");
  add("three");
  const second = run();
  assert.is.not(second.id, first.id);
  ok(cli(["sync"], { cwd: observer, agent: "watcher" }));
  assert.is(loopTip(observer), gitOut(bare, "rev-parse", LOOP), "followed: taken in");
  const fresh = cloneOf(bare);
  ok(cli(["sync"], { cwd: fresh, agent: "newcomer" }));
  assert.is(loopTip(fresh), gitOut(bare, "rev-parse", LOOP));
});

test("a change to a loop's planned units or its settings is refused on receive, followed or seen first", async () => {
  const { bare, observer, run } = await ranOneLoop();
  const loop = run();
  ok(cli(["sync"], { cwd: observer, agent: "watcher" }));
  const honest = gitOut(bare, "rev-parse", LOOP);
  const forge = (change: (r: any) => void) => {
    gitOut(bare, "update-ref", LOOP, honest);
    const event = { type: "loop", task: "", agent: "lead", at: new Date().toISOString(), scope: "primary", worktree: null, branch: null, note: `${loop.id}: forged` };
    amendRecord(bare, LOOP, change, { file: "loop.json", author: "lead", message: `loop: forged\n\n${JSON.stringify(event)}\n` });
  };
  forge((r) => (r.units[1].tasks = ["one"]));
  refusedEverywhere(bare, observer, new RegExp(`lead's change to loop ${loop.id} \\([0-9a-f]{12}\\) changes its planned unit u2 \\(its tasks, scope, order or agent\\)`));
  forge((r) => r.units.pop());
  refusedEverywhere(bare, observer, /removes its planned unit u2/);
  forge((r) => (r.units = [r.units[1], r.units[0]]));
  refusedEverywhere(bare, observer, /reorders its planned units/);
  forge((r) => (r.push = true));
  refusedEverywhere(bare, observer, /changes its push, fixed when the loop started/);
  // Its phase and its units' phases are the runner's to move: a change of those alone passes.
  forge((r) => ((r.phase = "stopped"), (r.units[1].phase = "stopped")));
  ok(cli(["sync"], { cwd: observer, agent: "watcher" }));
  assert.is(loopTip(observer), gitOut(bare, "rev-parse", LOOP));
});

test.run();
