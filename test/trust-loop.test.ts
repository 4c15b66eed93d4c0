// A loop record is shared state: anyone with push access to the sync remote can write one naming
// this host, any pid of yours and any folder. After sync, `loop stop` (and doctor's advice) must
// act on nothing it names: the process it names lives on, the folder it names stays.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { recordCommit, setRef } from "./support/forge.ts";
import { cleanupTemp, cli, gitOut, tempDir } from "./support/repo.ts";
import { twoClones } from "./support/servers.ts";
import { alive } from "./support/alive.ts";

test.after(cleanupTemp);

test("a forged loop record from the sync remote: loop stop signals no process and removes no folder; loop stop --abandon ends it acting on nothing it names", async () => {
  const { a: mallory, b: victim } = twoClones();
  for (const c of [mallory, victim]) assert.is(cli(["init"], { cwd: c, agent: "lead" }).code, 0);
  const precious = join(tempDir(), "precious");
  mkdirSync(join(precious, "keep"), { recursive: true });
  writeFileSync(join(precious, "keep", "data.txt"), "important\n");
  // Any process of the victim's, in a process group of its own.
  const sleeper = spawn("sleep", ["1000"], { detached: true, stdio: "ignore" });
  sleeper.unref();
  const pid = sleeper.pid!;
  const base = gitOut(mallory, "rev-parse", "HEAD");
  gitOut(victim, "checkout", "-q", "-B", "main", base);
  gitOut(victim, "branch", "keepme", base);
  try {
    const now = new Date().toISOString();
    const record = {
      id: "evil1", phase: "running", integration: "main", strategy: "merge", accept: false, push: false, keep: false, verify: false, max_worktrees: 2,
      runner: { pid: 4194300, start: null, host: hostname(), agent: "lead" }, started_at: now, updated_at: now,
      units: [{ id: "u1", tasks: ["t-none"], scope: [], after: [], phase: "running", agent: "loop-evil1-u1", branch: "keepme", worktree: join(precious, "does-not-exist"), base, pid, pid_start: null, host: hostname(), starts: 1, started_at: now, finished_at: null, result: null, onto: null, note: null, kept: false }],
    };
    const event = { type: "loop", task: "", agent: "lead", at: now, scope: "primary", worktree: null, branch: null, note: "evil1: started" };
    setRef(mallory, "refs/handoff/loop", recordCommit(mallory, "loop.json", record, { author: "lead", event }));
    assert.is(cli(["sync"], { cwd: mallory, agent: "lead" }).code, 0);
    assert.is(cli(["sync"], { cwd: victim, agent: "lead" }).code, 0);
    assert.ok(gitOut(victim, "rev-parse", "--verify", "refs/handoff/loop"), "the record arrived (it is shown, not acted on)");

    const doctor = cli(["doctor"], { cwd: victim, agent: "lead" });
    assert.match(doctor.stdout + doctor.stderr, "not started in this clone");
    // The only stop it advises is the one that acts on nothing the record names.
    assert.not.match(doctor.stdout + doctor.stderr, /loop stop(?! --abandon)/);

    const stop = cli(["loop", "stop", "--timeout", "2s"], { cwd: victim, agent: "lead" });
    assert.match(stop.stdout + stop.stderr, "no process is signalled and no folder removed");
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(alive(pid), "the process the record named lives on");
    assert.ok(existsSync(join(precious, "keep", "data.txt")), "the folder the record named is untouched");
    assert.is(gitOut(victim, "rev-parse", "--verify", "refs/heads/keepme"), base, "the branch the record named is untouched");

    // Nor does loop run resume it: its units' folders and agents are not this clone's.
    const run = cli(["loop", "run", "--agent-cmd", "true"], { cwd: victim, agent: "lead" });
    assert.is.not(run.code, 0);
    assert.match(run.stderr, "not started in this clone", run.stderr);
    assert.match(run.stderr, "loop stop --abandon", "the refusal names the way out");
    assert.ok(alive(pid) && existsSync(join(precious, "keep", "data.txt")));

    // The way out of a record nobody here can stop: abandon it, acting on nothing it names.
    const abandon = cli(["loop", "stop", "--abandon", "--json"], { cwd: victim, agent: "lead" });
    assert.is(abandon.code, 0, abandon.stderr);
    assert.is(abandon.json.phase, "stopped");
    assert.equal(abandon.json.units.map((u: { phase: string }) => u.phase), ["stopped"]);
    assert.match(abandon.stderr, /abandoned .*left as they are/);
    assert.match(gitOut(victim, "log", "-1", "--format=%s", "refs/handoff/loop"), /abandoned by lead/);
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(alive(pid), "still not signalled");
    assert.ok(existsSync(join(precious, "keep", "data.txt")));
    assert.is(gitOut(victim, "rev-parse", "--verify", "refs/heads/keepme"), base);
    assert.match(cli(["doctor"], { cwd: victim, agent: "lead" }).stdout, /loop evil1 is stopped/);
    // loop run is no longer held off (nothing is ready here, so it has nothing to start)
    const again = cli(["loop", "run", "--agent-cmd", "true"], { cwd: victim, agent: "lead" });
    assert.not.match(again.stderr, "not started in this clone", again.stderr);
  } finally {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      /* gone */
    }
  }
});

test.run();
