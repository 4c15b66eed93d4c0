// Writes while `git gc` runs in a loop with git's default prune expiry: nothing is lost. (The same
// under --prune=now is in prune-loop.test.ts.)
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
    process.kill(-loop.pid!, "SIGKILL");
  }
  await new Promise((r) => setTimeout(r, 300));
  return ids;
}

test("the same writes under git gc's default prune expiry lose nothing", async () => {
  const repo = tempRepo();
  const ids = await writesUnderGc(repo, []);
  for (const id of ids) assert.is(gitCode(repo, "cat-file", "-e", `refs/handoff/tasks/${id}:task.json`).status, 0, id);
  assert.is(cli(["doctor", "--json"], { cwd: repo }).json.checks.find((c: any) => c.name === "objects").status, "ok");
  assert.is(gitCode(repo, "fsck", "--no-dangling", "--connectivity-only").status, 0);
});

test.run();
