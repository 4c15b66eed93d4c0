// The event log is read from commit history: every filter, the JSON shape, and `git log` as the story.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, handoffRefs, tempRepo, type CliResult } from "./support/repo.ts";
import { storeClaim, storeDone, storeLease, storeMemory, storeRelease, storeTasks, type Actor } from "./support/seed.ts";

test.after(cleanupTemp);

const T0 = "2026-11-29T10:00:00.000Z";
const MIN = 60_000;
const plus = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function at(repo: string, agent: string, ms: number, args: string[]): CliResult {
  const r = cli(args, { cwd: repo, agent, env: { HANDOFF_NOW: plus(ms) } });
  assert.is(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
  return r;
}

/** Who acts where, `ms` after T0: the setup's writes, in-process (support/seed.ts). */
const by = (repo: string, agent: string, ms: number): Actor => ({ cwd: repo, agent, now: plus(ms) });

let repo = "";
let head = "";
/** Events as [type, task, agent] for the query, run at T0+20m. */
function q(...args: string[]): string[][] {
  const r = at(repo, "reader", 20 * MIN, ["events", ...args, "--json"]);
  return r.json.map((e: any) => [e.type, e.task, e.agent]);
}

test.before(async () => {
  repo = tempRepo();
  head = gitOut(repo, "rev-parse", "HEAD");
  await storeTasks(by(repo, "lead", 0), [{ id: "a", objective: "first" }]);
  await storeTasks(by(repo, "lead", 1 * MIN), [{ id: "b", objective: "second" }]);
  await storeClaim(by(repo, "alice", 2 * MIN), "a");
  await storeClaim(by(repo, "bob", 3 * MIN), "b");
  await storeDone(by(repo, "alice", 4 * MIN), "a", { commit: "HEAD", note: "shipped" });
  await storeRelease(by(repo, "bob", 5 * MIN), "b");
  await storeClaim(by(repo, "carol", 6 * MIN), "b", { ttl: "1m" });
  await storeClaim(by(repo, "dave", 10 * MIN), "b");
});
test.after(cleanupTemp);

const ALL = [
  ["created", "a", "lead"],
  ["created", "b", "lead"],
  ["claimed", "a", "alice"],
  ["claimed", "b", "bob"],
  ["done", "a", "alice"],
  ["released", "b", "bob"],
  ["claimed", "b", "carol"],
  ["expired", "b", "carol"],
  ["claimed", "b", "dave"],
];

test("events lists every event, oldest first, as text and --json", () => {
  assert.equal(q(), ALL);
  const text = at(repo, "reader", 20 * MIN, ["events"]).stdout.trim().split("\n");
  assert.is(text.length, ALL.length);
  assert.match(text[0]!, /^2026-11-29T10:00:00\.000Z\s+created\s+a\s+lead\s+\[ephemeral main\]$/);
  assert.match(text[4]!, new RegExp(`done\\s+a\\s+alice\\s+fence=1\\s+commit=${head.slice(0, 12)}`));
  assert.match(text[7]!, /expired\s+b\s+carol\s+fence=2\s+by=dave/);
});

test("event JSON: type, task, agent, at plus details", () => {
  const events = at(repo, "reader", 20 * MIN, ["events", "--json"]).json;
  for (const e of events) {
    for (const k of ["type", "task", "agent", "at", "scope", "worktree", "branch"]) assert.ok(k in e, `${k} in ${JSON.stringify(e)}`);
    assert.match(e.at, ISO);
  }
  const claimed = events[2];
  assert.equal([claimed.at, claimed.fence, claimed.expires_at], [plus(2 * MIN), 1, plus(32 * MIN)]);
  const done = events[4];
  assert.equal([done.commit, done.note], [head, "shipped"]);
  const expired = events[7];
  assert.equal([expired.by, expired.fence, expired.expires_at, expired.at], ["dave", 2, plus(7 * MIN), plus(10 * MIN)]);
  assert.is(events[0].objective, "first");
});

test("--since takes an ISO time or a duration back from HANDOFF_NOW", () => {
  assert.equal(q("--since", plus(4 * MIN)), ALL.slice(4));
  assert.equal(q("--since", "2026-11-29T10:04:00Z"), ALL.slice(4));
  assert.equal(q("--since", "15m"), ALL.slice(5)); // now is T0+20m
  assert.equal(q("--since", "10m"), ALL.slice(7));
  assert.equal(q("--since", "90s"), []);
  assert.equal(q("--since", "1d"), ALL);
  assert.equal(q("--since", "2026-11-29"), ALL);
  assert.is(at(repo, "reader", 20 * MIN, ["events", "--since", "1s"]).stdout.trim(), "no events");
});

test("--task, --agent (about or by), --type and --limit each filter", () => {
  assert.equal(q("--task", "a"), ALL.filter((e) => e[1] === "a"));
  assert.equal(q("--task", "b").length, 6);
  assert.equal(q("--task", "nope"), []);
  assert.equal(q("--agent", "carol"), [["claimed", "b", "carol"], ["expired", "b", "carol"]]);
  assert.equal(q("--agent", "dave"), [["expired", "b", "carol"], ["claimed", "b", "dave"]]); // dave recorded carol's expiry
  assert.equal(q("--agent", "nobody"), []);
  assert.equal(q("--type", "claimed"), ALL.filter((e) => e[0] === "claimed"));
  assert.equal(q("--type", "failed"), []);
  assert.equal(q("--limit", "2"), ALL.slice(7));
  assert.equal(q("--limit", "100"), ALL);
  // --agent after the verb filters; before the verb it names the caller
  const r = cli(["--agent", "zed", "events", "--agent", "bob", "--json"], { cwd: repo, env: { HANDOFF_NOW: plus(20 * MIN) } });
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.json.map((e: any) => e.type), ["claimed", "released"]);
});

test("filters combine", () => {
  assert.equal(q("--task", "b", "--type", "claimed", "--since", plus(5 * MIN)), [["claimed", "b", "carol"], ["claimed", "b", "dave"]]);
  assert.equal(q("--agent", "bob", "--limit", "1"), [["released", "b", "bob"]]);
  assert.equal(q("--task", "a", "--agent", "alice", "--type", "done"), [["done", "a", "alice"]]);
  assert.equal(q("--since", "15m", "--task", "a"), []);
  assert.equal(q("--since", "19m", "--task", "a"), [["claimed", "a", "alice"], ["done", "a", "alice"]]);
  assert.equal(q("--type", "claimed", "--limit", "3", "--since", "1h"), ALL.filter((e) => e[0] === "claimed").slice(-3));
});

test("--task finds the task's events kept on other refs: a refused claim on the agent's log, a memory about it", async () => {
  const r = tempRepo();
  await storeTasks(by(r, "lead", 0), [{ id: "api", objective: "the api" }]);
  await storeClaim(by(r, "alice", MIN), "api");
  assert.is(cli(["claim", "api"], { cwd: r, agent: "bob", env: { HANDOFF_NOW: plus(2 * MIN) } }).code, 3);
  await storeMemory(by(r, "bob", 3 * MIN), "the schema is in docs/", { task: "api" });
  const about = (args: string[]) => (at(r, "lead", 4 * MIN, ["events", ...args, "--json"]).json as { type: string; task: string }[]).map((e) => `${e.type} ${e.task}`);
  assert.equal(about(["--task", "api"]), ["created api", "claimed api", "claim_refused api", "memory_added api"]);
  assert.equal(about(["--task", "api", "--type", "memory_added"]), ["memory_added api"]);
  assert.equal(about(["--task", "api", "--limit", "2"]), ["claim_refused api", "memory_added api"]);
  // The text line names the memory.
  assert.match(at(r, "lead", 4 * MIN, ["events", "--task", "api", "--type", "memory_added"]).stdout, /memory_added .* memory=m-[0-9a-z]+/);
});

test("lease and release-request lines say what they are about (patterns, request id, answer), each one bounded line", async () => {
  const r = tempRepo();
  const long = `docs/${"y".repeat(100)}.md`;
  await storeLease(by(r, "alice", 0), ["src/api/**"], { exclusive: true });
  await storeLease(by(r, "alice", MIN), ["docs/a.md", "docs/b.md", "docs/c.md", "docs/d.md", "docs/e.md"]);
  await storeLease(by(r, "alice", MIN), [long]);
  const id = at(r, "bob", 2 * MIN, ["ask", "alice", "--release", "src/api/users.ts", "--json"]).json.id;
  at(r, "alice", 3 * MIN, ["answer", id, "--keep", "--until", "1h"]);
  at(r, "alice", 4 * MIN, ["unlease", "src/api/**"]);
  const text = at(r, "lead", 5 * MIN, ["events"]).stdout.trim().split("\n");
  assert.is(text.length, 6, text.join("\n"));
  assert.match(text[0]!, /^\S+  leased +- +alice  paths=src\/api\/\*\* \(exclusive\)  until=/);
  assert.match(text[1]!, /  leased +- +alice  paths=docs\/a\.md,docs\/b\.md,docs\/c\.md \+2 more  until=/);
  assert.match(text[2]!, /  paths=docs\/y{70,}…  until=/, "a long path is cut");
  assert.ok(text[2]!.length < 200, text[2]);
  assert.match(text[3]!, new RegExp(`  release_requested +- +bob +paths=src/api/\\*\\*  request=${id}  holder=alice  `));
  assert.match(text[4]!, new RegExp(`  release_answered +- +alice +paths=src/api/\\*\\*  request=${id}  .*answer=keep  until=`));
  assert.match(text[5]!, /  unleased +- +alice +paths=src\/api\/\*\*  \[/);
});

test("git log refs/handoff/tasks/<id> reads as the task's story, authored by the agents, at the events' times", () => {
  const log = gitOut(repo, "log", "--format=%an|%aI|%s", "refs/handoff/tasks/b").split("\n");
  assert.equal(log, [
    `dave|2026-11-29T10:10:00+00:00|claimed b by dave (fence 3, until ${plus(40 * MIN)})`,
    "dave|2026-11-29T10:10:00+00:00|expired b: lease of carol ran out (seen by dave)",
    `carol|2026-11-29T10:06:00+00:00|claimed b by carol (fence 2, until ${plus(7 * MIN)})`,
    "bob|2026-11-29T10:05:00+00:00|released b by bob",
    `bob|2026-11-29T10:03:00+00:00|claimed b by bob (fence 1, until ${plus(33 * MIN)})`,
    "lead|2026-11-29T10:01:00+00:00|created b: second",
  ]);
  assert.is(gitOut(repo, "log", "-1", "--format=%s", "refs/handoff/tasks/a"), `done a by alice at ${head.slice(0, 12)}`);
  // the body is the event as JSON, after a blank line
  const body = gitOut(repo, "log", "-1", "--format=%b", "refs/handoff/tasks/a");
  const event = JSON.parse(body);
  assert.equal([event.type, event.task, event.agent, event.commit, event.note], ["done", "a", "alice", head, "shipped"]);
  // and git show lists the record itself
  const record = JSON.parse(gitOut(repo, "show", "refs/handoff/tasks/a:task.json"));
  assert.equal([record.id, record.status], ["a", "done"]);
});

test("reading events writes nothing", () => {
  const before = handoffRefs(repo);
  q("--since", "1h");
  q("--task", "b");
  assert.is(handoffRefs(repo), before);
});

test.run();
