// The event key files' lines start with the event's time, and `events --limit N` keeps only the
// lines of the N newest times (event-index-lines.ts readNewestLines), decoding those. What it keeps
// must be exactly the lines of those times; and where they hold fewer than N events (lines of a
// ref deleted or rewritten since, events the filter leaves out), the answer is still a walk's.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { HandoffEvent } from "../src/core/event.ts";
import { agentKey } from "../src/store/event-index.ts";
import { eventLine, readAllLines, readNewestLines, type RefsOf } from "../src/store/event-index-lines.ts";
import { cleanupTemp, gitOut, tempRepo } from "./support/repo.ts";
import { by, events, MIN, plus, walked } from "./support/event-walk.ts";
import { storeClaim, storeDone, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

const manifest = (repo: string) => JSON.parse(readFileSync(join(repo, ".git/handoff/events/manifest.json"), "utf8"));
const keyFile = (repo: string, key: string) => {
  const gen: number = manifest(repo).gen;
  return join(repo, ".git/handoff/events", gen ? `${key}.${gen}.jsonl` : `${key}.jsonl`);
};

test("the lines kept for --limit are every line of the newest times, against a sort of them all", () => {
  // Times of one to three printable characters, so that many share a time and some are another's
  // start; ids 1-6, of which 5 and 6 are not live, and 4's last positions not committed.
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const chars = "!09:AZz~";
  const refsOf: RefsOf = (ids) => {
    const out = new Map<number, { place: number; n: number }>();
    for (const id of ids) if (id <= 4) out.set(id, { place: 10 - id, n: id === 4 ? 3 : 100 });
    return out;
  };
  for (let round = 0; round < 400; round++) {
    const count = rnd(40);
    let text = "";
    for (let i = 0; i < count; i++) {
      let at = "";
      for (let k = 1 + rnd(3); k > 0; k--) at += chars[rnd(chars.length)];
      const event = { type: "claimed", task: `t${i}`, agent: "a", at } as unknown as HandoffEvent;
      text += eventLine(1 + rnd(6), rnd(6), `oid${i}`, event);
    }
    if (round % 5 === 0) text = text.slice(0, -1); // no line break after the last line
    const keep = 1 + rnd(12);
    const all = readAllLines(text, refsOf)!;
    const rows = text.split("\n").filter(Boolean);
    const times = rows.map((r) => r.slice(0, r.indexOf("\t"))).sort().reverse();
    const floor = times.length > keep ? times[keep - 1]! : "";
    const want = all.lines.filter((l) => l.at! >= floor).map((l) => l.json).sort();
    const got = readNewestLines(text, refsOf, keep)!;
    assert.equal(got.lines.map((l) => l.json).sort(), want, `round ${round}, keep ${keep}`);
    assert.is(got.partial, times.filter((t) => t >= floor).length < rows.length, `round ${round}: partial`);
    for (const l of got.lines) assert.is(l.ref, all.lines.find((a) => a.json === l.json)!.ref, `round ${round}: its ref's place`);
  }
});

test("lines of one time by the ten thousand: kept all, sorted a few times, not at every line", () => {
  const refsOf: RefsOf = (ids) => new Map([...ids].map((id) => [id, { place: id, n: 1e9 }]));
  let text = eventLine(1, 0, "old", { type: "created", task: "x", agent: "a", at: "2026-01-01T00:00:00.000Z" } as unknown as HandoffEvent);
  for (let i = 0; i < 20_000; i++) text += eventLine(2, i, `o${i}`, { type: "created", task: `t${i}`, agent: "a", at: "2026-01-02T00:00:00.000Z" } as unknown as HandoffEvent);
  const t = performance.now();
  const got = readNewestLines(text, refsOf, 1)!;
  assert.is(got.lines.length, 20_000, "every line of the newest time");
  assert.ok(got.partial, "the older line left out");
  assert.ok(performance.now() - t < 5_000, `${Math.round(performance.now() - t)} ms`);
});

test("--limit where the lines of the newest times are of a ref deleted since: the newest live events, as a walk", async () => {
  const repo = tempRepo();
  await storeTasks(by(repo, "lead", 0), [{ id: "a", objective: "one" }]);
  await storeClaim(by(repo, "alice", MIN), "a");
  await storeDone(by(repo, "alice", 2 * MIN), "a", { commit: "HEAD" });
  // Task b's events are the newest three.
  await storeTasks(by(repo, "lead", 10 * MIN), [{ id: "b", objective: "two" }]);
  await storeClaim(by(repo, "bob", 11 * MIN), "b");
  await storeDone(by(repo, "bob", 12 * MIN), "b", { commit: "HEAD" });
  events(repo, "--limit", "2"); // the index, with b's lines in it
  gitOut(repo, "update-ref", "-d", "refs/handoff/tasks/b");
  const want = await walked(repo);
  assert.ok(want.length >= 3 && want.every((e: { task: string }) => e.task !== "b"), "b's events are gone from the history");
  for (const limit of [1, 2, 3, 50]) {
    // Twice: through the manifest (the refs moved), then through its head.
    assert.equal(events(repo, "--limit", String(limit)), want.slice(-limit), `--limit ${limit}`);
    assert.equal(events(repo, "--limit", String(limit)), want.slice(-limit), `--limit ${limit}, from the head`);
  }
  assert.equal(events(repo, "--agent", "alice", "--limit", "1"), (await walked(repo, { agent: "alice" })).slice(-1));
});

test("a line whose time is not stated is decoded, and counts", async () => {
  const repo = tempRepo();
  await storeTasks(by(repo, "lead", 0), [{ id: "a", objective: "one" }]);
  await storeClaim(by(repo, "alice", MIN), "a");
  await storeTasks(by(repo, "lead", 2 * MIN), [{ id: "b", objective: "two" }]);
  await storeDone(by(repo, "alice", 3 * MIN), "a", { commit: "HEAD" });
  const want = await walked(repo, { agent: "alice" });
  assert.equal(events(repo, "--agent", "alice", "--limit", "1"), want.slice(-1));
  // The newest line's time left out (its length kept with spaces after the JSON, so the manifest's
  // lengths still hold): read as an older build's line would be, by decoding it.
  const file = keyFile(repo, `agent-${agentKey("alice")}`);
  const lines = readFileSync(file, "utf8").split("\n");
  const i = lines.findIndex((l) => l.startsWith(plus(3 * MIN)));
  assert.ok(i >= 0, "the done of a has a line of its time");
  lines[i] = lines[i]!.slice(plus(3 * MIN).length) + " ".repeat(plus(3 * MIN).length);
  writeFileSync(file, lines.join("\n"));
  const gen = manifest(repo).gen;
  assert.equal(events(repo, "--agent", "alice", "--limit", "1"), want.slice(-1));
  assert.equal(events(repo, "--agent", "alice", "--limit", "2"), want.slice(-2));
  assert.is(manifest(repo).gen, gen, "read as it is, not built again");
});

test("a line whose stated time is not its event's is damage: the index is built again", async () => {
  const repo = tempRepo();
  await storeTasks(by(repo, "lead", 0), [{ id: "a", objective: "one" }]);
  await storeClaim(by(repo, "alice", MIN), "a");
  await storeTasks(by(repo, "lead", 2 * MIN), [{ id: "b", objective: "two" }]);
  const want = await walked(repo);
  events(repo);
  // The first line's time made the newest, the same length: it is kept for --limit 1 and decoded.
  const file = keyFile(repo, "all");
  const text = readFileSync(file, "utf8");
  writeFileSync(file, "2099" + text.slice(4));
  const gen = manifest(repo).gen;
  assert.equal(events(repo, "--limit", "1"), want.slice(-1));
  assert.ok(manifest(repo).gen > gen, "built again");
  assert.equal(events(repo, "--limit", "2"), want.slice(-2));
});

test("a compaction keeps the event lines of live refs (their id the second field) and drops the others", async () => {
  const repo = tempRepo();
  await storeTasks(by(repo, "lead", 0), [{ id: "a", objective: "one" }]);
  await storeClaim(by(repo, "alice", MIN), "a");
  const message = gitOut(repo, "log", "-1", "--format=%B", "refs/handoff/tasks/a");
  const fastImport = (ref: string, from: string | null, n: number, text: string) => {
    let stream = "";
    for (let i = 0; i < n; i++) {
      stream += `commit ${ref}\ncommitter lead <lead@localhost> ${1_700_000_000 + i} +0000\ndata ${Buffer.byteLength(text, "utf8")}\n${text}\n`;
      if (i === 0 && from) stream += `from ${from}\n`;
    }
    const r = spawnSync("git", ["fast-import", "--quiet", "--force"], { cwd: repo, input: stream, encoding: "utf8" });
    assert.is(r.status, 0, r.stderr);
  };
  // A long history indexed, then rewritten: past 1,000 dead lines, the next update compacts.
  fastImport("refs/handoff/tasks/long", null, 1100, message);
  events(repo, "--limit", "1");
  fastImport("refs/handoff/tasks/long", "refs/handoff/tasks/long~1", 2, message.replace('"alice"', '"alice2"'));
  const want = await walked(repo);
  assert.equal(events(repo, "--limit", "3"), want.slice(-3));
  assert.is(manifest(repo).dead, 0, "compacted");
  assert.is(readFileSync(keyFile(repo, "all"), "utf8").split("\n").length - 1, want.length, "one line an event of the live refs");
  assert.equal(events(repo), want);
  assert.equal(events(repo, "--agent", "alice2"), await walked(repo, { agent: "alice2" }));
});

test.run();
