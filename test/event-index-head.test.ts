// `events` with no ref moved since the event index was last brought up to date answers from the
// first line of its manifest (the head: key file lengths, each listed ref's id and count, and the
// stamp of the ref files it was built from) without listing the refs; with `--limit` it decodes
// only the lines of the newest times. Both must answer exactly what a walk of the history answers.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { agentKey } from "../src/store/event-index.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { by, events, MIN, plus, run, walked } from "./support/event-walk.ts";
import { storeClaim, storeDone, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

const manifestPath = (repo: string) => join(repo, ".git/handoff/events/manifest.json");
const head = (repo: string) => JSON.parse(readFileSync(manifestPath(repo), "utf8")).head;

test("a read with no ref moved answers from the manifest's head alone", async () => {
  const repo = tempRepo();
  await storeTasks(by(repo, "lead", 0), [{ id: "a", objective: "one" }]);
  await storeClaim(by(repo, "alice", MIN), "a");
  const want = await walked(repo, { agent: "alice" });
  assert.equal(events(repo, "--agent", "alice", "--limit", "5"), want, "the first read builds the index");
  assert.ok(head(repo)?.stamp, "the manifest has a head");
  // The manifest's entries past the head made unreadable: a read that went past the head would
  // find no manifest and build the index again, rewriting the file.
  const text = readFileSync(manifestPath(repo), "utf8");
  const broken = text.slice(0, text.indexOf("\n") + 1) + ',"version":"not this"}';
  writeFileSync(manifestPath(repo), broken);
  assert.equal(events(repo, "--agent", "alice", "--limit", "5"), want);
  assert.is(readFileSync(manifestPath(repo), "utf8"), broken, "read from the head, nothing rebuilt");
});

test("stats with no ref moved reads the head alone too, with and without a window", async () => {
  const repo = tempRepo();
  await storeTasks(by(repo, "lead", 0), [{ id: "a", objective: "one" }]);
  for (let i = 1; i <= 3; i++) await storeClaim(by(repo, "alice", i * MIN), "a"); // a claim, then renewals: times stats only counts
  await storeDone(by(repo, "alice", 4 * MIN), "a", { commit: "HEAD" });
  const stats = (...args: string[]) => {
    const { remote: _r, ...got } = run(repo, ["stats", "--json", ...args]).json;
    return got;
  };
  const want = [stats(), stats("--since", plus(2 * MIN))];
  assert.ok(want[0].events > want[1].events, "the window leaves events out");
  const text = readFileSync(manifestPath(repo), "utf8");
  const broken = text.slice(0, text.indexOf("\n") + 1) + ',"version":"not this"}';
  writeFileSync(manifestPath(repo), broken);
  assert.equal([stats(), stats("--since", plus(2 * MIN))], want);
  assert.is(readFileSync(manifestPath(repo), "utf8"), broken, "read from the head, nothing rebuilt");
});

test("the head is not taken once the refs moved: a new event, a ref rewound, the refs packed after a write", async () => {
  const repo = tempRepo();
  await storeTasks(by(repo, "lead", 0), [{ id: "a", objective: "one" }]);
  await storeTasks(by(repo, "lead", MIN), [{ id: "b", objective: "two" }]);
  await storeClaim(by(repo, "alice", 2 * MIN), "a");
  gitOut(repo, "pack-refs", "--all");
  const check = async (what: string) => {
    for (const args of [[], ["--limit", "2"], ["--agent", "alice"], ["--agent", "bob", "--limit", "1"], ["--type", "claimed"]]) {
      const filter = { ...(args[0] === "--agent" ? { agent: args[1] } : {}), ...(args[0] === "--type" ? { type: args[1] } : {}) };
      const all = await walked(repo, filter);
      const limit = args.includes("--limit") ? Number(args[args.indexOf("--limit") + 1]) : undefined;
      assert.equal(events(repo, ...args), limit ? all.slice(-limit) : all, `${what}: events ${args.join(" ")}`);
    }
  };
  await check("built");
  // A write leaves its ref loose, and packing it changes only packed-refs (no loose file either side).
  await storeClaim(by(repo, "bob", 3 * MIN), "b");
  gitOut(repo, "pack-refs", "--all");
  await check("a claim, then the refs packed");
  await storeDone(by(repo, "alice", 4 * MIN), "a", { commit: "HEAD" });
  await check("a loose ref moved");
  gitOut(repo, "update-ref", "refs/handoff/tasks/a", "refs/handoff/tasks/a~1");
  await check("a ref rewound");
  gitOut(repo, "update-ref", "-d", "refs/handoff/tasks/b");
  gitOut(repo, "pack-refs", "--all");
  await check("a ref deleted, the refs packed");
  // Nothing moved, but a packed ref written loose again at its value (as writes since a pack leave
  // them): the index holds these tips already, and its head is written for the files as they are.
  const before = head(repo).stamp;
  mkdirSync(join(repo, ".git/refs/handoff/tasks"), { recursive: true });
  writeFileSync(join(repo, ".git/refs/handoff/tasks/a"), `${gitOut(repo, "rev-parse", "refs/handoff/tasks/a")}\n`);
  await check("nothing moved");
  assert.is.not(head(repo).stamp, before, "the head written again for the files as they are now");
});

test("--limit through the head: events of one time on several refs, and a commit on two refs, as the walk lists them", async () => {
  const repo = tempRepo();
  // Five tasks and their claims at one instant, on refs in an order of their own.
  for (const id of ["e", "c", "a", "d", "b"]) await storeTasks(by(repo, "lead", MIN), [{ id, objective: id }]);
  for (const id of ["c", "e", "a"]) await storeClaim(by(repo, `agent-${id}`, MIN), id);
  await storeClaim(by(repo, "agent-b", 2 * MIN), "b");
  // A ref copied from another: its commits are reached twice and listed once.
  gitOut(repo, "update-ref", "refs/handoff/tasks/z-copy", "refs/handoff/tasks/c");
  events(repo); // the index and its head
  // A ref new to the index (its id the highest) whose place among the refs is second.
  await storeTasks(by(repo, "lead", MIN), [{ id: "a0", objective: "late" }]);
  const all = await walked(repo);
  assert.ok(all.filter((e) => e.at === plus(MIN)).length >= 9, "one instant holds most events");
  events(repo); // brought up to date
  for (let limit = 1; limit <= all.length + 1; limit++) {
    assert.equal(events(repo, "--limit", String(limit)), all.slice(-limit), `--limit ${limit}`);
  }
  const claimed = await walked(repo, { type: "claimed" });
  for (let limit = 1; limit <= claimed.length; limit++) assert.equal(events(repo, "--type", "claimed", "--limit", String(limit)), claimed.slice(-limit), `claimed --limit ${limit}`);
  const since = await walked(repo, { since: new Date(plus(MIN)) });
  assert.equal(events(repo, "--since", plus(MIN), "--limit", "3"), since.slice(-3));
  assert.equal(events(repo, "--since", plus(2 * MIN), "--limit", "30"), await walked(repo, { since: new Date(plus(2 * MIN)) }));
});

test("--limit through the head over more refs than it looks up one by one: their places decoded whole, in the walk's order", async () => {
  const repo = tempRepo();
  // Forty tasks added at one instant (one event each, on forty refs in an order of their own), a
  // few claims after: the newest 45 events span more than 32 refs, all but the claims of one time.
  const ids = Array.from({ length: 40 }, (_, i) => `t${String((i * 17) % 40).padStart(2, "0")}`);
  await storeTasks(by(repo, "lead", MIN), ids.map((id) => ({ id, objective: id })));
  events(repo); // the index
  // Thirty-five more of that instant, indexed after them (higher ids) but listed before them.
  await storeTasks(by(repo, "lead", MIN), Array.from({ length: 35 }, (_, i) => ({ id: `a${String((i * 13) % 35).padStart(2, "0")}`, objective: "later" })));
  for (const id of ["t03", "a31"]) await storeClaim(by(repo, `agent-${id}`, 2 * MIN), id);
  const all = await walked(repo);
  events(repo); // brought up to date, and its head
  for (const limit of [3, 33, 41, 45, 80]) assert.equal(events(repo, "--limit", String(limit)), all.slice(-limit), `--limit ${limit}`);
});

test("a line whose time cannot be read without decoding it is decoded, and still counts", async () => {
  const repo = tempRepo();
  await storeTasks(by(repo, "lead", 0), [{ id: "a", objective: "one" }]);
  await storeClaim(by(repo, "alice", MIN), "a");
  await storeTasks(by(repo, "lead", 2 * MIN), [{ id: "b", objective: "two" }]);
  const want = await walked(repo, { agent: "alice" });
  assert.equal(events(repo, "--agent", "alice", "--limit", "1"), want.slice(-1));
  // The claim's line with its fields in another order (the same length, so the manifest's lengths
  // still hold): a number first, where the time is not read without decoding the line.
  const file = join(repo, ".git/handoff/events", `agent-${agentKey("alice")}.jsonl`);
  const lines = readFileSync(file, "utf8").split("\n");
  const i = lines.findIndex((l) => l.includes('"type":"claimed"'));
  const [pre, json] = [lines[i]!.slice(0, lines[i]!.indexOf("{")), JSON.parse(lines[i]!.slice(lines[i]!.indexOf("{")))];
  const { fence, ...rest } = json;
  assert.is(typeof fence, "number");
  lines[i] = pre + JSON.stringify({ fence, ...rest });
  writeFileSync(file, lines.join("\n"));
  assert.equal(events(repo, "--agent", "alice", "--limit", "1"), want.slice(-1));
  assert.equal(events(repo, "--agent", "alice", "--limit", "5"), want);
});

test("archived tasks' events through the head, and once more archived", async () => {
  const repo = tempRepo();
  for (const [i, id] of ["p", "q", "r"].entries()) {
    await storeTasks(by(repo, "lead", i * MIN), [{ id, objective: id }]);
    await storeClaim(by(repo, "alice", (3 + i) * MIN), id);
    await storeDone(by(repo, "alice", (3 + i) * MIN), id, { commit: "HEAD" });
  }
  const compact = () => assert.is(cli(["compact"], { cwd: repo, agent: "lead", env: { HANDOFF_NOW: plus(30 * 24 * 60 * MIN) } }).code, 0);
  const check = async (what: string) => {
    const all = await walked(repo);
    for (const limit of [1, 4, 20]) assert.equal(events(repo, "--limit", String(limit)), all.slice(-limit), `${what}: --limit ${limit}`);
    assert.equal(events(repo, "--agent", "alice"), await walked(repo, { agent: "alice" }), what);
  };
  await check("live");
  compact();
  assert.ok(gitOut(repo, "for-each-ref", "refs/handoff/archive"), "archived");
  await check("archived");
  await storeTasks(by(repo, "lead", 10 * MIN), [{ id: "s", objective: "s" }]);
  await storeClaim(by(repo, "alice", 11 * MIN), "s");
  await storeDone(by(repo, "alice", 11 * MIN), "s", { commit: "HEAD" });
  await check("a task more");
  compact();
  await check("that one archived too");
});

test.run();
