// A waiter agrees with the writes about the takeover grace: through a sync remote, the worker's
// claim that expired by the waiter's clock still stands for the grace (clock skew), so `wait` does
// not call the task free, nor failed after its last allowed attempt, while the worker may still
// finish it; past the grace it does. Likewise the loop's view of its units' tasks.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTemp, cli, gitOut } from "./support/repo.ts";
import { at, INSIDE, PAST, T, twoClones } from "./support/grace-clock.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanEnv } from "./support/repo.ts";
import { openTasks } from "../src/work/loop-units.ts";

test.after(cleanupTemp);

/**
 * One remote, two clones, max_attempts 1 committed on main: in b, bob adds t and claims it for one
 * minute from T (its one attempt); a fetches main and syncs at INSIDE.
 */
function setup(): { a: string } {
  const { a, b } = twoClones("grace-wait");
  writeFileSync(join(b, ".handoff.yaml"), "max_attempts: 1\n");
  gitOut(b, "add", ".handoff.yaml");
  gitOut(b, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one attempt a task");
  gitOut(b, "push", "-q", "origin", "main");
  gitOut(a, "pull", "-q", "origin", "main");
  const bob = (args: string[]) => assert.is(cli(args, { cwd: b, agent: "bob", env: at(T) }).code, 0, args.join(" "));
  bob(["task", "add", "bob's one try", "--id", "t", "--push"]);
  bob(["claim", "t", "--ttl", "1m", "--push"]);
  assert.is(cli(["sync"], { cwd: a, agent: "alice", env: at(INSIDE) }).code, 0);
  return { a };
}

test("wait --id: inside the grace the worker's expired claim on its last attempt still stands (the wait times out); past it the task has failed", () => {
  const { a } = setup();
  const inside = cli(["wait", "--id", "t", "--timeout", "2s", "--json"], { cwd: a, agent: "alice", env: at(INSIDE) });
  assert.is(inside.code, 8, inside.stderr);
  assert.is((inside.json as { status: string }).status, "claimed", inside.stdout);
  assert.not.match(inside.stderr, /fail/i);
  const past = cli(["wait", "--id", "t", "--timeout", "2s", "--json"], { cwd: a, agent: "alice", env: at(PAST) });
  assert.is((past.json as { status: string }).status, "failed", past.stdout + past.stderr);
  assert.is.not(past.code, 8);
});

test("the loop's open tasks: another agent's claim inside the grace is held by it, past the grace the task is settled", async () => {
  const { a } = setup();
  const unit = { agent: "alice", tasks: ["t"] } as Parameters<typeof openTasks>[1];
  const open = async (ms: number) => {
    const store = await openSyncedStore({ cwd: a, agent: "alice", env: cleanEnv(at(ms)) });
    try {
      return await openTasks(store, unit);
    } finally {
      store.close();
    }
  };
  assert.equal(await open(INSIDE), [{ id: "t", status: "claimed", holder: "bob" }]);
  assert.equal(await open(PAST), [{ id: "t", status: "failed", holder: null }]);
  // A task missing here keeps its own id, whatever finished task comes before it in the unit.
  for (const args of [["task", "add", "done first", "--id", "d"], ["claim", "d"], ["done", "d"]]) assert.is(cli(args, { cwd: a, agent: "alice", env: at(INSIDE) }).code, 0, args.join(" "));
  unit.tasks = ["d", "ghost", "t"];
  assert.equal(await open(INSIDE), [{ id: "ghost", status: "missing", holder: null }, { id: "t", status: "claimed", holder: "bob" }]);
});

test.run();
