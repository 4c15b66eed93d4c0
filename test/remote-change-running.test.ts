// A running process follows a change of the sync remote made while it runs: `git handoff remote`
// (or git config) writes .git/config, and the next exclusive write goes where the repository now
// says. The store kept the name for its life: an MCP session reopens its store when .git/config
// changes, but a `git handoff worker` or the dashboard started before a team moved to a dedicated
// coordination remote went on granting claims through the old one, where clones that had moved
// could grant the same task again.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openSyncedStore } from "../src/sync/open.ts";
import { claim } from "../src/store/task-actions.ts";
import { addTask } from "../src/store/task-store.ts";
import { cleanEnv, cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { serveRoot } from "./support/servers.ts";

test.after(cleanupTemp);

const task = (id: string) => ({ id, objective: `do ${id}`, priority: 0, scope: [], maxAttempts: 3 });
const remoteTip = (bare: string, ref: string) => gitOut(bare, "for-each-ref", "--format=%(objectname)", ref);

test("a running store's exclusive writes follow the sync remote as .git/config changes", async () => {
  const served = serveRoot();
  const old = served.bare("old");
  const coord = served.bare("coord");
  const repo = tempRepo();
  gitOut(repo, "remote", "add", "origin", old);
  gitOut(repo, "push", "-q", "origin", "main");
  const store = await openSyncedStore({ cwd: repo, agent: "server", warm: true, env: cleanEnv() });
  try {
    assert.is(await store.syncRemote(), "origin");
    await addTask(store, task("a1"));
    await claim(store, "a1");
    assert.ok(remoteTip(old, "refs/handoff/tasks/a1"), "claimed through origin");

    // The team moves to a dedicated coordination remote, from another process.
    const r = cli(["remote", "--url", coord], { cwd: repo, agent: "lead" });
    assert.is(r.code, 0, r.stderr);
    assert.is(await store.syncRemote(), "coord");
    await addTask(store, task("a2"));
    await claim(store, "a2");
    assert.ok(remoteTip(coord, "refs/handoff/tasks/a2"), "claimed through the new remote");
    assert.is(remoteTip(old, "refs/handoff/tasks/a2"), "", "not through the old one");

    // And coordination kept in this clone only.
    assert.is(cli(["remote", "--none"], { cwd: repo, agent: "lead" }).code, 0);
    assert.is(await store.syncRemote(), null);
  } finally {
    store.close();
  }
});

test.run();
