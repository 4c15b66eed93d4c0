// The event index's update lock (.git/handoff/events/lock) says who holds it (owned-lock.ts). It
// used to be an empty file broken by age alone: a live update held past 60 s was broken, and two
// readers that both found an old lock removed it in turn, the second removing the lock the first
// had just taken, so both appended to the same key files. Now a live holder's lock is never
// broken whatever its age, a gone holder's at once, and an empty one (an older build's) by age.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { thisHost } from "../src/git/host-name.ts";
import { processStart } from "../src/git/owned-lock.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { storeClaim, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

const T0 = "2026-12-07T10:00:00.000Z";

async function repoWithEvents(): Promise<{ repo: string; dir: string; lock: string }> {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead", now: T0 }, [{ id: "m", objective: "one" }]);
  await storeClaim({ cwd: repo, agent: "alice", now: new Date(Date.parse(T0) + 60_000).toISOString() }, "m");
  const dir = join(gitOut(repo, "rev-parse", "--path-format=absolute", "--git-common-dir"), "handoff", "events");
  mkdirSync(dir, { recursive: true });
  return { repo, dir, lock: join(dir, "lock") };
}

const events = (repo: string) => {
  const r = cli(["events", "--json"], { cwd: repo, agent: "reader" });
  assert.is(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { type: string; task?: string }[]).map((e) => `${e.type} ${e.task ?? ""}`);
};

const ageBy = (path: string, ms: number) => {
  const t = (Date.now() - ms) / 1000;
  utimesSync(path, t, t);
};

test("a live holder's lock is left in place however old, and the history is read without the index", async () => {
  const { repo, dir, lock } = await repoWithEvents();
  const holder = spawn("sleep", ["60"], { stdio: "ignore" });
  try {
    const record = JSON.stringify({ pid: holder.pid, host: thisHost(), start: processStart(holder.pid!) });
    writeFileSync(lock, record);
    ageBy(lock, 10 * 60_000); // far past the 60 s an empty lock is given
    const seen = events(repo);
    assert.ok(seen.some((e) => e === "claimed m"), "the events are read directly");
    assert.is(readFileSync(lock, "utf8"), record, "the live holder's lock is untouched");
    assert.not.ok(existsSync(join(dir, "manifest.json")), "no index written beside a live update");
  } finally {
    holder.kill();
  }
  await new Promise((r) => holder.once("exit", r));
  // Its holder gone: broken at once (it is only minutes old; no age is waited for).
  const seen = events(repo);
  assert.ok(seen.some((e) => e === "claimed m"));
  assert.ok(existsSync(join(dir, "manifest.json")), "the index is built once the holder is gone");
  assert.not.ok(existsSync(lock), "and the lock released");
});

test("a lock without a holder recorded (an older build's) is broken only after 60 s", async () => {
  const { repo, dir, lock } = await repoWithEvents();
  writeFileSync(lock, "");
  ageBy(lock, 30_000);
  const direct = events(repo);
  assert.ok(existsSync(lock), "30 s: still taken for a live update");
  assert.not.ok(existsSync(join(dir, "manifest.json")));
  ageBy(lock, 61_000);
  assert.equal(events(repo), direct, "the same events, from the index");
  assert.ok(existsSync(join(dir, "manifest.json")), "61 s: broken, and the index built");
  assert.not.ok(existsSync(lock));
});

test.run();
