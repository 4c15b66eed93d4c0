// A claim whose dependencies keep moving under it (other writers, or refreshes from the sync
// remote, each time between its read and its write) gives up after a few tries with a stable code,
// lost_race, and leaves the task as it was; not an internal error. In process: the moves are made
// by the mutation the claim is handed, each time it is about to write.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { claimChecked } from "../src/store/dependency-actions.ts";
import { ReadMoved } from "../src/store/rests-on.ts";
import { openStore } from "../src/store/store.ts";
import { loadTask, type mutateTask } from "../src/store/task-store.ts";
import { HandoffError } from "../src/core/errors.ts";
import { cleanEnv, cleanupTemp, cli, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("dependencies that move before every write: lost_race after bounded tries, the task unclaimed", async () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "first", "--id", "dep"], { cwd: repo, agent: "lead" }).code, 0);
  assert.is(cli(["task", "add", "second", "--id", "t", "--after", "dep"], { cwd: repo, agent: "lead" }).code, 0);
  assert.is(cli(["claim", "dep"], { cwd: repo, agent: "lead" }).code, 0);
  assert.is(cli(["done", "dep"], { cwd: repo, agent: "lead" }).code, 0);
  const store = await openStore({ cwd: repo, agent: "claude-1", env: cleanEnv() });
  try {
    let tries = 0;
    const mutate: typeof mutateTask = async () => {
      tries++;
      throw new ReadMoved("refs/handoff/tasks/dep");
    };
    const e = await claimChecked(store, "t", 60_000, { mutate }).then(() => null, (err) => err);
    assert.ok(e instanceof HandoffError, String(e));
    assert.is((e as HandoffError).code, "lost_race");
    assert.match((e as HandoffError).message, /^task t's dependencies kept changing while it was being claimed \(6 tries\); try again$/);
    assert.is(tries, 6);
    assert.is((await loadTask(store, "t")).task.status, "todo");
  } finally {
    store.close();
  }
});

test.run();
