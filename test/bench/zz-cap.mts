// scratch: a 1,000-task remote by path and a synced clone, left for manual timing
import { addTask } from "../../src/store/task-store.ts";
import { openSyncedStore } from "../../src/sync/open.ts";
import { gitOut, tempRepo } from "../support/repo.ts";
import { cloneOf, serveRoot } from "../support/servers.ts";
import { spawnSync } from "node:child_process";
const served = serveRoot();
const bare = served.bare("cap");
const seed = tempRepo();
gitOut(seed, "push", "-q", bare, "main");
const store = await openSyncedStore({ cwd: seed, agent: "seed", warm: true });
for (let i = 0; i < 1000; i++) await addTask(store, { id: `live-${i}`, objective: `task ${i}`, priority: 0, scope: [], maxAttempts: 3 });
store.close();
gitOut(seed, "push", "-q", bare, "refs/handoff/*:refs/handoff/*");
const clone = cloneOf(bare);
spawnSync(process.execPath, ["/work/main/dist/git-handoff.cjs", "sync"], { cwd: clone, env: { ...process.env, HANDOFF_AGENT: "sync" } });
console.log(clone);
