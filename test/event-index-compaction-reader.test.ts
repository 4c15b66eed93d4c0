// A reader of the event index goes by the manifest it read, and reads each key file no further than
// that manifest says. An update in another process may compact the key files between the two (a
// ref rewritten or deleted leaves dead lines; past 1,000 of them the files are rewritten without
// them). The compacted files must not be read as the old manifest's: their lines of the rewritten
// ref are under a new id, the old id's are gone, and a file grown back past the old length is not
// shorter than the manifest says, so nothing looked damaged: `stats` and `events` answered as if the
// rewritten ref had no history at all.
import { spawnSync } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { indexDir, readIndexed, readStatsIndexed, refreshIndex } from "../src/store/event-index.ts";
import { readManifest } from "../src/store/event-index-files.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { storeClaim, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

const NOW = "2026-11-29T10:00:00.000Z";
const LONG = 1100;

/** A fast-import stream of `n` commits on `ref` (the first after `from`), each with `message`: `n` events. */
function commits(ref: string, from: string | null, n: number, message: string): string {
  let s = "";
  for (let i = 0; i < n; i++) {
    s += `commit ${ref}\ncommitter lead <lead@localhost> ${1_700_000_000 + i} +0000\ndata ${Buffer.byteLength(message, "utf8")}\n${message}\n`;
    if (i === 0 && from) s += `from ${from}\n`;
  }
  return s;
}

test("a reader holding the manifest from before a compaction does not read the compacted files as its own", async () => {
  const repo = tempRepo();
  const at = { cwd: repo, agent: "lead", now: NOW };
  await storeTasks(at, [{ id: "a", objective: "one" }]);
  await storeClaim({ ...at, agent: "alice" }, "a");
  const message = gitOut(repo, "log", "-1", "--format=%B", "refs/handoff/tasks/a");
  const fi = (stream: string) => {
    const r = spawnSync("git", ["fast-import", "--quiet", "--force"], { cwd: repo, input: stream, encoding: "utf8" });
    assert.is(r.status, 0, r.stderr);
  };
  // A ref with a long history of events (what a much-renewed task or a busy agent's log holds).
  fi(commits("refs/handoff/tasks/long", null, LONG, message));
  assert.is(cli(["stats", "--json"], { cwd: repo, agent: "reader", env: { HANDOFF_NOW: NOW } }).code, 0, "the index is built");

  const store = await openSyncedStore({ cwd: repo, agent: "reader" });
  try {
    const tips = await store.listRefs("refs/handoff/");
    const held = await refreshIndex(store, tips);
    assert.ok(held && !held.report.walked, "the index was up to date: the reader holds its manifest");
    const m1 = held!.manifest;
    const statsBefore = readStatsIndexed(store, m1, false)!;
    const allBefore = readIndexed(store, m1, "all", () => new Map())!;
    assert.ok(statsBefore.events.length >= LONG, `${statsBefore.events.length} stats events`);

    // Another process rewrites the long ref (its last commit replaced, two more on top) and brings
    // the index up to date: 1,100 dead lines of 2,200, so the key files are compacted, and the
    // rewritten ref's 1,101 lines under its new id leave them longer than they were.
    fi(commits("refs/handoff/tasks/long", "refs/handoff/tasks/long~1", 2, message.replace('"alice"', '"alice2"')));
    assert.is(cli(["stats", "--json"], { cwd: repo, agent: "writer", env: { HANDOFF_NOW: NOW } }).code, 0);
    const m2 = readManifest(indexDir(store))!;
    assert.is(m2.dead, 0, "the update compacted the key files");

    // The reader goes on with the manifest it holds: it reads what that manifest indexed, or finds
    // it cannot (null: the caller reads the manifest again), never a mix.
    const stats = readStatsIndexed(store, m1, false);
    if (stats) assert.is(stats.events.length, statsBefore.events.length, "stats lines read through the old manifest");
    const all = readIndexed(store, m1, "all", () => new Map());
    if (all) assert.is(all.length, allBefore.length, "events read through the old manifest");
  } finally {
    store.close();
  }
});

test.run();
