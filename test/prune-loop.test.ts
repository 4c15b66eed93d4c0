// Writes while `git gc` runs in a loop: under --prune=now (unsafe with concurrent writers, as git
// documents) writes restore what vanished before and right after their ref update, and doctor
// --repair mends what a prune still broke. (Default expiry: prune-default.test.ts.)
import { spawn, spawnSync } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanEnv, cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { addTask } from "../src/store/task-store.ts";

test.after(cleanupTemp);

const gitCode = (cwd: string, ...args: string[]) => spawnSync("git", args, { cwd, env: cleanEnv(), encoding: "utf8" });

/** `git gc` in a loop while 300 writes run in this process; returns the ids written. */
async function writesUnderGc(repo: string, gcArgs: string[]): Promise<string[]> {
  const loop = spawn("sh", ["-c", `while :; do git gc -q ${gcArgs.join(" ")} 2>/dev/null; sleep 0.2; done`], { cwd: repo, env: cleanEnv(), detached: true, stdio: "ignore" });
  const store = await openSyncedStore({ cwd: repo, agent: "writer" });
  const ids: string[] = [];
  try {
    for (let i = 0; i < 300; i++) ids.push((await addTask(store, { objective: `write ${i} ${Math.random()}`, priority: 0, scope: [], maxAttempts: 3 })).id);
  } finally {
    store.close();
    // TERM, so a gc stopped mid-way removes its own lock files (as a user's Ctrl-C would).
    const exited = new Promise((r) => loop.once("exit", r));
    process.kill(-loop.pid!, "SIGTERM");
    await exited;
  }
  await new Promise((r) => setTimeout(r, 500));
  return ids;
}

test("300 writes under git gc --prune=now every 200 ms: doctor --repair leaves nothing missing, fsck and gc clean", async () => {
  const repo = tempRepo();
  const ids = await writesUnderGc(repo, ["--prune=now"]);
  assert.is(ids.length, 300);
  const d = cli(["doctor", "--json"], { cwd: repo });
  const before = d.json.checks.find((c: any) => c.name === "objects");
  const fixed = cli(["doctor", "--repair", "--json"], { cwd: repo }).json.checks.find((c: any) => c.name === "objects");
  assert.is(fixed.status, "ok", fixed.detail);
  const fsck = gitCode(repo, "fsck", "--no-dangling", "--connectivity-only");
  assert.is(fsck.status, 0, fsck.stderr);
  const gc = gitCode(repo, "gc", "-q");
  assert.is(gc.status, 0, gc.stderr);
  const left = gitOut(repo, "for-each-ref", "--format=%(refname)", "refs/handoff/tasks/").split("\n").filter(Boolean).length;
  process.stdout.write(`\n  prune loop: ${before.status === "ok" ? "no ref broken" : before.detail.split(":")[0]}; ${left} of 300 tasks intact after repair\n`);
});

test.run();
