// The loop record at refs/handoff/loop is shared state anyone with push access can write. A loop
// acts only as the agents it started, on the tasks it planned for them, as this clone recorded it
// (.git/handoff/loop-plans/): a forged record never makes it release or claim another agent's task,
// run the agent command as another agent, or make a folder outside the temp dir; and a forged
// record reusing the id of a loop started here is not resumed. A loop's plan changed from one
// commit to the next is refused on receive (src/sync/loop-receive.ts); the same change with another
// loop's record in between is a new loop as far as receive can tell, and reaches the runner.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { amendRecord } from "./support/forge.ts";
import { cleanupTemp, cli, cliAsync, gitOut, tempDir } from "./support/repo.ts";
import { storeClaim, storeSync, storeTasks } from "./support/seed.ts";
import { cloneOf, emptyRemote } from "./support/servers.ts";

test.after(cleanupTemp);

const ok = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};

/** A victim with tasks a and b, alice (another clone) holding b, and mallory's clone: written in-process (support/seed.ts). */
async function world() {
  const bare = emptyRemote();
  const [victim, alice, mallory] = [cloneOf(bare), cloneOf(bare), cloneOf(bare)];
  const lead = { cwd: victim, agent: "lead" };
  const byAlice = { cwd: alice, agent: "alice" };
  await storeTasks(lead, [
    { id: "a", objective: "task a", scope: ["a.txt"] },
    { id: "b", objective: "task b", scope: ["b.txt"] },
  ]);
  await storeSync(lead);
  await storeSync(byAlice);
  await storeClaim(byAlice, "b");
  await storeSync(byAlice);
  await storeSync(lead);
  return { bare, victim, alice, mallory };
}

/** Mallory appends to the victim's loop record as it is now a commit per change (authored as its runner's agent), and pushes them. */
function forgeLoop(mallory: string, victim: string, ...changes: ((r: any) => void)[]): void {
  gitOut(mallory, "fetch", "-q", victim, "+refs/handoff/loop:refs/handoff/loop");
  for (const change of changes) {
    amendRecord(mallory, "refs/handoff/loop", change, {
      file: "loop.json",
      author: "lead",
      message: `loop \n\n${JSON.stringify({ type: "loop", task: "", agent: "lead", at: new Date().toISOString(), scope: "primary", worktree: null, branch: null, note: "forged" })}\n`,
    });
  }
  gitOut(mallory, "push", "-q", "-f", "origin", "refs/handoff/loop");
}

/** Two changes: the record of another (finished, empty) loop, then the loop as it was with `change`. */
function byWayOfAnother(change: (r: any) => void): ((r: any) => void)[] {
  let was: any;
  return [
    (r) => {
      was = structuredClone(r);
      Object.assign(r, { id: `${r.id}x`, phase: "finished", units: [] });
    },
    (r) => {
      Object.assign(r, was);
      change(r);
    },
  ];
}

const holder = (repo: string) => {
  const t = ok(cli(["task", "show", "b", "--json"], { cwd: repo, agent: "lead" })).json;
  return [t.status, t.claim?.agent ?? null, t.claim?.fence ?? null];
};

test("a forged record reusing the id of a loop started here: loop run does not resume it, nothing is released or claimed as alice, and doctor does not advise loop run", async () => {
  const { victim, alice, mallory } = await world();
  // An earlier loop, started here: its agent quits with its task unfinished.
  const first = cli(["loop", "run", "--agent-cmd", "true", "--poll", "200ms"], { cwd: victim, agent: "lead" });
  assert.match(first.stderr, "finished: failed u1", first.stderr);
  ok(cli(["sync"], { cwd: victim, agent: "lead" }));
  const before = holder(alice);
  assert.equal(before, ["claimed", "alice", before[2]]);
  const ran = join(tempDir(), "agent-ran.txt");

  // As alice herself: refused on receive (a unit's agent is always loop-<loop>-<unit>).
  forgeLoop(mallory, victim, (r) => {
    r.phase = "running";
    r.runner = { ...r.runner, pid: 4194300, start: null, host: hostname() };
    Object.assign(r.units[0], { agent: "alice", tasks: ["b"], phase: "running", pid: null, pid_start: null, host: hostname(), starts: 1, finished_at: null, kept: false });
  });
  const s1 = cli(["sync", "--json"], { cwd: victim, agent: "lead" });
  assert.is(s1.code, 3, s1.stderr);
  assert.match(JSON.stringify(s1.json.quarantined), /loop-<loop>-<unit>/);

  // As the loop's own agent name, but on alice's task: refused on receive, a change to the plan.
  const onAlicesTask = (r: any) => {
    r.phase = "running";
    r.runner = { ...r.runner, pid: 4194300, start: null, host: hostname() };
    Object.assign(r.units[0], { tasks: ["b"], phase: "running", pid: null, pid_start: null, host: hostname(), starts: 1, finished_at: null, kept: false });
  };
  forgeLoop(mallory, victim, onAlicesTask);
  const planned = cli(["sync", "--json"], { cwd: victim, agent: "lead" });
  assert.is(planned.code, 3, planned.stderr);
  assert.match(JSON.stringify(planned.json.quarantined), /changes its planned unit u1 \(its tasks, scope, order or agent\)/);
  // With another loop's record in between: taken in, never acted on.
  forgeLoop(mallory, victim, ...byWayOfAnother(onAlicesTask));
  const s2 = cli(["sync", "--json"], { cwd: victim, agent: "lead" });
  assert.equal(s2.json.quarantined, [], s2.stdout);
  assert.match(readFileSync(join(victim, ".git/handoff/loops-started"), "utf8"), gitOut(victim, "show", "refs/handoff/loop:loop.json").match(/"id": "([^"]+)"/)![1]!);

  const doctor = cli(["doctor"], { cwd: victim, agent: "lead" });
  assert.match(doctor.stdout + doctor.stderr, "other units, agents or tasks than this clone planned");
  assert.not.match(doctor.stdout + doctor.stderr, "loop run --agent-cmd");

  const run = cli(["loop", "run", "--agent-cmd", `echo "$HANDOFF_AGENT" >> ${ran}`, "--poll", "200ms"], { cwd: victim, agent: "lead" });
  assert.is.not(run.code, 0, run.stdout);
  assert.match(run.stderr, "other units, agents or tasks than this clone planned");
  assert.match(run.stderr, "loop stop --abandon");
  assert.not.ok(existsSync(ran), "the agent command never ran");
  const stop = cli(["loop", "stop", "--timeout", "1s"], { cwd: victim, agent: "lead" });
  assert.match(stop.stdout + stop.stderr, "no process is signalled");
  assert.equal(holder(victim), before, "alice's claim is as it was here");
  ok(cli(["sync"], { cwd: victim, agent: "lead" }));
  ok(cli(["sync"], { cwd: alice, agent: "alice" }));
  assert.equal(holder(alice), before, "and on the remote");
});

test("a running loop whose record is forged mid-run (another task for its unit; a unit id with ..): it stops acting, releases nothing of alice's, makes no folder outside the temp dir", async () => {
  const { victim, alice, mallory } = await world();
  const before = holder(alice);
  const escaped = join(tmpdir(), "..", `handoff-traversed-${process.pid}`);
  // The unit's agent runs until the forged record has arrived (or a minute).
  const gate = join(tempDir(), "gate");
  const loop = cliAsync(["loop", "run", "--agent-cmd", `for i in $(seq 300); do [ -e ${gate} ] && break; sleep 0.2; done`, "--poll", "200ms"], { cwd: victim, agent: "lead" });
  const t0 = Date.now();
  while (!gitOut(victim, "for-each-ref", "refs/handoff/loop").length || !/"running"[\s\S]*"pid": \d/.test(gitOut(victim, "show", "refs/handoff/loop:loop.json"))) {
    if (Date.now() - t0 > 60_000) throw new Error("the loop never started its agent");
    await new Promise((r) => setTimeout(r, 200));
  }
  ok(cli(["sync"], { cwd: victim, agent: "lead" }));
  // A new unit whose id climbs out of the temp dir: refused on receive.
  forgeLoop(mallory, victim, (r) => {
    r.units.push({ ...r.units[0], id: `x/../../handoff-traversed-${process.pid}`, agent: `loop-${r.id}-x`, tasks: [], scope: [], after: [], phase: "planned", branch: null, worktree: null, base: null, pid: null, pid_start: null, host: null, starts: 0, started_at: null, finished_at: null, result: null, onto: null, note: null, kept: false });
  });
  const s1 = cli(["sync", "--json"], { cwd: victim, agent: "lead" });
  assert.is(s1.code, 3, s1.stderr);
  assert.match(JSON.stringify(s1.json.quarantined), /refs\/handoff\/loop/);
  // Alice's task for the running unit, under its own agent name: refused on receive; by way of
  // another loop's record, taken in, and the loop stops acting.
  const onAlicesTask = (r: any) => {
    r.units[0].tasks = ["b"];
  };
  forgeLoop(mallory, victim, onAlicesTask);
  const planned = cli(["sync", "--json"], { cwd: victim, agent: "lead" });
  assert.is(planned.code, 3, planned.stderr);
  assert.match(JSON.stringify(planned.json.quarantined), /changes its planned unit u1/);
  forgeLoop(mallory, victim, ...byWayOfAnother(onAlicesTask));
  ok(cli(["sync"], { cwd: victim, agent: "lead" }));
  writeFileSync(gate, "");
  const out = await loop;
  assert.is.not(out.code, 0, out.stdout + out.stderr);
  assert.match(out.stderr, "other units, agents or tasks than this clone planned", out.stderr);
  assert.not.ok(existsSync(escaped), "no folder outside the temp dir");
  assert.equal(holder(victim), before, "alice's claim is as it was");
  assert.not.match(gitOut(victim, "log", "--format=%an %s", "refs/handoff/tasks/b"), /released/);
  // What the loop's own agent holds is left to expire (the loop acts on nothing the record names).
  ok(cli(["loop", "stop", "--abandon"], { cwd: victim, agent: "lead" }));
});

test.run();
