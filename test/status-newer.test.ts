// `status` marks what the sync remote holds from a newer git-handoff as `task list`, the board and
// MCP's overview do (present/newer-note.ts): each line naming such a task (its claim, its matrix
// row, its review entry, a blocked edge it waits on or is waited on by) says this copy may be
// stale, and --json carries newer_on_remote on each record of it, not only the ref in the sync
// section.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { futureTask, newerProject } from "./support/newer-remote.ts";
import { cleanupTemp, cli, succeeded } from "./support/repo.ts";
import { storeClaim, storeSync, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

const STALE = /\(on origin from a newer git-handoff: this copy may be stale; upgrade to change it\)$/;

test("status marks each task held back as newer on its own lines (held, matrix, review, blocked) and in --json", async () => {
  const { bare, a, b } = newerProject();
  // The tasks, bob's claims and the syncs: written in-process (support/seed.ts); the done that runs a verify command is a process.
  const bob = { cwd: b, agent: "bob" };
  await storeTasks({ cwd: a, agent: "alice", push: true }, [
    ...["z", "w", "y"].map((id) => ({ id, objective: id })),
    // Blocked edges: x waits on z (the blocker held back), u on y (the waiter held back), v on y (neither).
    ...([["x", "z"], ["u", "y"], ["v", "y"]] as const).map(([id, after]) => ({ id, objective: id, after: [after] })),
  ]);
  await storeSync(bob);
  // w: bob submitted it for review; z: bob holds it; then a newer git-handoff rewrites both.
  await storeClaim(bob, "w");
  succeeded(cli(["done", "w", "--verify", "true"], { cwd: b, agent: "bob" }));
  await storeClaim(bob, "z", { ttl: "2h" });
  await storeSync(bob);
  futureTask(bare, "z");
  futureTask(bare, "w");
  futureTask(bare, "u");
  assert.is(cli(["sync"], { cwd: b, agent: "bob" }).code, 3);

  const lines = succeeded(cli(["status", "--no-conflicts"], { cwd: b, agent: "bob" })).stdout.split("\n");
  const line = (re: RegExp) => {
    const found = lines.filter((l) => re.test(l));
    assert.is(found.length, 1, `${re}:\n${lines.join("\n")}`);
    return found[0]!;
  };
  assert.match(line(/^ +bob +z +until /), STALE, "the held claim");
  assert.match(line(/^ +z +H /), STALE, "z's matrix row");
  assert.match(line(/^ +w +R /), STALE, "w's matrix row");
  assert.match(line(/^ +w +by bob /), STALE, "w's review entry");
  assert.not.match(line(/^ +y +\. /), STALE, "y is current");
  assert.match(line(/^ +x waits on z /), STALE, "x's edge: its blocker z is held back");
  assert.match(line(/^ +u waits on y /), STALE, "u's edge: u itself is held back");
  assert.not.match(line(/^ +v waits on y /), STALE, "v's edge names no task held back");

  const j = succeeded(cli(["status", "--no-conflicts", "--json"], { cwd: b, agent: "bob" })).json;
  assert.equal(j.holders.flatMap((h: any) => h.tasks.map((t: any) => [h.agent, t.task, t.newer_on_remote])), [["bob", "z", true]]);
  assert.equal(j.matrix.rows.map((r: any) => [r.task, !!r.newer_on_remote]).sort(), [["u", true], ["v", false], ["w", true], ["x", false], ["y", false], ["z", true]]);
  assert.equal(j.review.map((r: any) => [r.task, r.newer_on_remote]), [["w", true]]);
  assert.equal(j.blocked.map((e: any) => [e.task, e.waits_on, !!e.newer_on_remote]).sort(), [["u", "y", true], ["v", "y", false], ["x", "z", true]]);
});

test.run();
