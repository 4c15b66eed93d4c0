// `git gc` running in a loop beside the store's writers, for the tests that prove nothing is lost
// when git prunes while we write.
import { spawn, spawnSync } from "node:child_process";
import { addTask } from "../../src/store/task-store.ts";
import { openSyncedStore } from "../../src/sync/open.ts";
import { cleanEnv } from "./repo.ts";

/** A git command's whole result (status and stderr), for assertions on git's own verdict. */
export const gitCode = (cwd: string, ...args: string[]) => spawnSync("git", args, { cwd, env: cleanEnv(), encoding: "utf8" });

/** `git gc` with `gcArgs` every 200 ms while 300 writes run in this process; returns the ids written. */
export async function writesUnderGc(repo: string, gcArgs: string[]): Promise<string[]> {
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
