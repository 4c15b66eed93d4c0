// `events` and `stats` read one record besides the event index: their caller's agent record, for
// its heartbeat. They keep it between runs in a file of their own (CALLER_RECORDS), not in
// records.json, which holds status's whole listing and was parsed whole for that one record.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CALLER_RECORDS, RecordCacheFile } from "../src/store/record-cache-file.ts";
import { cleanupTemp, cli, tempDir, tempRepo } from "./support/repo.ts";
import { storeClaim, storeSession, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

const NOW = "2026-11-29T10:00:00.000Z";

test("events and stats keep their caller's record apart from status's listing", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead", now: NOW }, [{ id: "a", objective: "one" }, { id: "b", objective: "two" }]);
  await storeSession({ cwd: repo, agent: "alice", now: NOW }, "work on a");
  await storeClaim({ cwd: repo, agent: "alice", now: NOW }, "a");
  const run = (args: string[]) => {
    const r = cli(args, { cwd: repo, agent: "alice", env: { HANDOFF_NOW: NOW } });
    assert.is(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  run(["status"]);
  const listing = join(repo, ".git/handoff/records.json");
  const own = join(repo, ".git/handoff", CALLER_RECORDS.name);
  const before = readFileSync(listing, "utf8");
  assert.ok(before.includes('"agent":"alice"'), "status's listing holds alice's record");
  const first = run(["events", "--agent", "alice", "--limit", "5"]);
  assert.ok(existsSync(own), "events kept its caller's record");
  const kept = readFileSync(own, "utf8");
  assert.equal(Object.keys(JSON.parse(kept).records).length, 1, "that record alone");
  assert.ok(kept.includes('"agent":"alice"'));
  assert.is(run(["events", "--agent", "alice", "--limit", "5"]), first);
  run(["stats"]);
  assert.is(readFileSync(own, "utf8"), kept, "found there by the next events and by stats: nothing added");
  assert.is(readFileSync(listing, "utf8"), before, "records.json left as status wrote it");
});

test("a file of callers' records past its cap keeps the run's own only", () => {
  const path = join(tempDir(), "records.json");
  const runWith = (keys: string[]) => {
    const f = new RecordCacheFile(path, 3);
    for (const k of keys) if (f.get(k) === undefined) f.set(k, { k });
    f.save();
  };
  const stored = () => Object.keys(JSON.parse(readFileSync(path, "utf8")).records).sort();
  runWith(["a"]);
  runWith(["b"]);
  runWith(["c", "a"]);
  assert.equal(stored(), ["a", "b", "c"], "added to what is there, up to the cap");
  runWith(["d"]);
  assert.equal(stored(), ["d"], "past the cap: the run's own");
  runWith(["d"]);
  assert.equal(stored(), ["d"], "nothing new: not written");
});

test.run();
