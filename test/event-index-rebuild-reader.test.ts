// A reader of the event index goes by the manifest it read. When the index is built from scratch
// (its manifest damaged, removed, or of another version; a key file damaged), the new key files
// must not take the names the reader goes by: their ids are given anew in the refs' order, so a
// ref added since (or a ref the older index did not hold) moves every id after it, and the reader
// would list one ref's events under another's name, or another ref's in place of its own, with
// no file shorter than its manifest says to tell.
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { indexDir, readIndexed, readStatsIndexed, refreshIndex } from "../src/store/event-index.ts";
import { readEvents } from "../src/store/events.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanupTemp, cli, tempRepo } from "./support/repo.ts";
import { storeClaim, storeDone, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

const T0 = "2026-11-29T10:00:00.000Z";
const MIN = 60_000;
const by = (repo: string, agent: string, ms: number) => ({ cwd: repo, agent, now: new Date(Date.parse(T0) + ms).toISOString() });

/** What makes the next read build the index from scratch, done to its folder. */
const rebuilds: [string, (dir: string) => void][] = [
  ["manifest removed", (dir) => rmSync(join(dir, "manifest.json"))],
  ["manifest not JSON", (dir) => writeFileSync(join(dir, "manifest.json"), "garbage")],
  [
    "manifest of another version",
    (dir) => {
      const m = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
      writeFileSync(join(dir, "manifest.json"), JSON.stringify({ ...m, version: m.version + 1 }));
    },
  ],
  // A file the reader below does not read, cut short: the update finds it out and builds again.
  ["a key file cut", (dir) => writeFileSync(join(dir, readdirSync(dir).find((f) => f.startsWith("type-created"))!), "")],
];

for (const [how, damage] of rebuilds) {
  test(`a reader holding the manifest from before a build from scratch reads its own index or none (${how})`, async () => {
    const repo = tempRepo();
    await storeTasks(by(repo, "lead", 0), [{ id: "m", objective: "one" }]);
    await storeTasks(by(repo, "lead", MIN), [{ id: "n", objective: "two" }]);
    await storeClaim(by(repo, "alice", 2 * MIN), "m");
    await storeDone(by(repo, "alice", 3 * MIN), "m", { commit: "HEAD" });
    await storeClaim(by(repo, "carol", 4 * MIN), "n");
    assert.is(cli(["events", "--json"], { cwd: repo, agent: "reader", env: { HANDOFF_NOW: T0 } }).code, 0, "the index is built");

    const store = await openSyncedStore({ cwd: repo, agent: "reader" });
    try {
      const dir = indexDir(store);
      const held = await refreshIndex(store, await store.listRefs("refs/handoff/"));
      assert.ok(held && !held.report.walked, "the index was up to date: the reader holds its manifest");
      const m1 = held!.manifest;
      const all = () => readIndexed(store, m1, "all", () => new Map());
      const stats = () => readStatsIndexed(store, m1, false);
      const allBefore = all()!;
      const statsBefore = stats()!;
      assert.ok(allBefore.length >= 5 && statsBefore.events.length >= 3);

      // A task whose ref comes before the others' (its id theirs now, in a build from scratch),
      // with more events than they hold: the new files are longer than the reader's manifest says.
      await storeTasks(by(repo, "lead", 5 * MIN), [{ id: "a", objective: "first in order" }]);
      for (let i = 0; i < 4; i++) await storeClaim(by(repo, "bob", (6 + i) * MIN), "a");
      damage(dir);
      assert.is(cli(["events", "--json"], { cwd: repo, agent: "writer", env: { HANDOFF_NOW: T0 } }).code, 0);
      const m2 = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
      assert.ok(m2.refs["refs/handoff/tasks/a"], "the index was built again, with the new task");

      // What the reader reads through the manifest it holds: its own lines, or nothing (null: it
      // reads the manifest again), never the new index's lines under its ids.
      const after = all();
      if (after) assert.equal(after, allBefore, "events read through the old manifest");
      const statsAfter = stats();
      if (statsAfter) assert.equal(statsAfter, statsBefore, "stats lines read through the old manifest");
      // And through the new manifest, what a walk of the history answers.
      assert.equal(cli(["events", "--json"], { cwd: repo, agent: "reader", env: { HANDOFF_NOW: T0 } }).json, await readEvents(store, {}, { onProblem: () => {} }));
      assert.ok(
        readdirSync(dir).every((f) => !f.endsWith(".jsonl") || f.endsWith(`.${m2.gen}.jsonl`)),
        `only the new generation's key files are left: ${readdirSync(dir).join(" ")}`,
      );
    } finally {
      store.close();
    }
  });
}

test("each build from scratch takes a generation none before it took", async () => {
  const repo = tempRepo();
  await storeTasks(by(repo, "lead", 0), [{ id: "x", objective: "one" }]);
  const dir = join(repo, ".git/handoff/events");
  const gens: number[] = [];
  for (let i = 0; i < 3; i++) {
    assert.is(cli(["events", "--json"], { cwd: repo, agent: "reader", env: { HANDOFF_NOW: T0 } }).json.length, 1);
    gens.push(JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")).gen);
    rmSync(join(dir, "manifest.json"));
  }
  assert.equal(gens, [0, 1, 2], "a fresh folder starts at 0, each build after takes the next");
  // The key files gone (a reader may still hold the manifest naming them): the counter goes on.
  for (const f of readdirSync(dir)) if (f.endsWith(".jsonl")) rmSync(join(dir, f));
  assert.is(cli(["events", "--json"], { cwd: repo, agent: "reader", env: { HANDOFF_NOW: T0 } }).json.length, 1);
  assert.is(JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")).gen, 3);
  // The counter gone too (and the key files with it): the build starts over, nothing to mistake.
  for (const f of readdirSync(dir)) rmSync(join(dir, f));
  assert.is(cli(["events", "--json"], { cwd: repo, agent: "reader", env: { HANDOFF_NOW: T0 } }).json.length, 1);
  assert.is(JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")).gen, 0);
  // The counter gone, the key files left: past the newest of them.
  rmSync(join(dir, "generation"));
  rmSync(join(dir, "manifest.json"));
  assert.is(cli(["events", "--json"], { cwd: repo, agent: "reader", env: { HANDOFF_NOW: T0 } }).json.length, 1);
  assert.is(JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")).gen, 1);
});

test.run();
