// The event index under .git/handoff/events: `events` and `stats` read through it and answer
// exactly what a walk of the history answers, after new events, a ref rewritten by another tool,
// and a damaged index file.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { computeStats } from "../src/core/stats.ts";
import { agentKey } from "../src/store/event-index.ts";
import { readEvents } from "../src/store/events.ts";
import { cleanupTemp, cli, gitOut, tempRepo, type CliResult } from "./support/repo.ts";
import { walked } from "./support/event-walk.ts";
import { storeClaim, storeDone, storeRelease, storeTasks, type Actor } from "./support/seed.ts";

test.after(cleanupTemp);

const T0 = "2026-11-29T10:00:00.000Z";
const MIN = 60_000;
const plus = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

function at(repo: string, agent: string, ms: number, args: string[]): CliResult {
  const r = cli(args, { cwd: repo, agent, env: { HANDOFF_NOW: plus(ms) } });
  assert.is(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
  return r;
}

/** Who writes the setup, at T0 + `ms`, as `at` runs the verb. */
const by = (repo: string, agent: string, ms: number): Actor => ({ cwd: repo, agent, now: plus(ms) });

const manifest = (repo: string) => JSON.parse(readFileSync(join(repo, ".git/handoff/events/manifest.json"), "utf8"));
const events = (repo: string, ...args: string[]) => at(repo, "reader", 30 * MIN, ["events", ...args, "--json"]).json;

let repo = "";
test.before(async () => {
  repo = tempRepo();
  await storeTasks(by(repo, "lead", 0), [{ id: "a", objective: "first" }]);
  await storeTasks(by(repo, "lead", 1 * MIN), [{ id: "b", objective: "second" }]);
  await storeClaim(by(repo, "alice", 2 * MIN), "a");
  await storeClaim(by(repo, "bob", 3 * MIN), "b");
  await storeDone(by(repo, "alice", 4 * MIN), "a", { commit: "HEAD" });
  await storeRelease(by(repo, "bob", 5 * MIN), "b");
});

test("events through the index answer what the history walk answers, for every filter", async () => {
  assert.equal(events(repo), await walked(repo));
  assert.equal(events(repo, "--agent", "alice"), await walked(repo, { agent: "alice" }));
  assert.equal(events(repo, "--type", "claimed"), await walked(repo, { type: "claimed" }));
  assert.equal(events(repo, "--agent", "bob", "--type", "released"), await walked(repo, { agent: "bob", type: "released" }));
  assert.equal(events(repo, "--agent", "nobody"), []);
  assert.ok(manifest(repo).refs["refs/handoff/tasks/a"], "the index was written");
});

test("--limit gives the newest N and --since stops at the window, through the index", async () => {
  const all = await walked(repo);
  const last2 = events(repo, "--limit", "2");
  assert.equal(last2, all.slice(-2));
  assert.equal(last2.map((e: any) => e.type), ["done", "released"]);
  const since = events(repo, "--since", plus(3 * MIN));
  assert.equal(since, all.filter((e) => e.at >= plus(3 * MIN)));
  assert.equal(events(repo, "--agent", "alice", "--limit", "1").map((e: any) => e.type), ["done"]);
  // One task's history is walked newest first and stops at the limit.
  assert.equal(events(repo, "--task", "a", "--limit", "2"), (await walked(repo, { task: "a" })).slice(-2));
});

test("new events are added incrementally: a ref moved forward keeps its id and grows", async () => {
  events(repo);
  const before = manifest(repo).refs["refs/handoff/tasks/b"];
  await storeClaim(by(repo, "carol", 6 * MIN), "b");
  const got = events(repo, "--agent", "carol");
  assert.equal(got.map((e: any) => [e.type, e.task]), [["claimed", "b"]]);
  const after = manifest(repo).refs["refs/handoff/tasks/b"];
  assert.is(after.id, before.id, "same ref id: appended, not rebuilt");
  assert.ok(after.n > before.n);
  assert.equal(events(repo), await walked(repo));
});

test("a ref rewritten by another tool is re-read: its dropped events are gone from every answer", async () => {
  events(repo);
  const before = manifest(repo).refs["refs/handoff/tasks/b"];
  // Someone rewinds task b by hand to before carol's claim.
  gitOut(repo, "update-ref", "refs/handoff/tasks/b", "refs/handoff/tasks/b~1");
  const got = events(repo, "--agent", "carol");
  assert.equal(got, [], "carol's claim was on the rewound commit");
  const after = manifest(repo).refs["refs/handoff/tasks/b"];
  assert.is.not(after.id, before.id, "a new id: the old lines are dead");
  assert.equal(events(repo), await walked(repo));
  assert.equal(events(repo, "--type", "claimed"), await walked(repo, { type: "claimed" }));
});

test("a deleted ref leaves the answers", async () => {
  const r = tempRepo();
  await storeTasks(by(r, "lead", 0), [{ id: "x", objective: "one" }]);
  await storeTasks(by(r, "lead", MIN), [{ id: "y", objective: "two" }]);
  assert.is(events(r).length, 2);
  gitOut(r, "update-ref", "-d", "refs/handoff/tasks/x");
  assert.equal(events(r).map((e: any) => e.task), ["y"]);
});

test("a damaged index file is thrown away and rebuilt, the answer unchanged", async () => {
  const want = await walked(repo, { agent: "alice" });
  events(repo, "--agent", "alice");
  const dir = join(repo, ".git/handoff/events");
  const agentFile = readFileSync(join(dir, "all.jsonl"), "utf8");
  assert.ok(agentFile.length > 0);
  // A torn line in the middle of a key file.
  writeFileSync(join(dir, "all.jsonl"), agentFile.slice(0, 40) + "\n{not json\n" + agentFile.slice(40));
  assert.equal(events(repo), await walked(repo));
  // A manifest that is not JSON at all.
  writeFileSync(join(dir, "manifest.json"), "garbage");
  assert.equal(events(repo, "--agent", "alice"), want);
  assert.is(typeof manifest(repo).refs, "object", "rebuilt");
  assert.equal(events(repo), await walked(repo));
});

test("a key file removed, emptied or cut short is found out against the manifest, and the index is built again", async () => {
  const dir = join(repo, ".git/handoff/events");
  const damages: [string, (path: string) => void][] = [
    ["removed", (p) => rmSync(p)],
    ["emptied", (p) => writeFileSync(p, "")],
    ["cut after its first line", (p) => writeFileSync(p, readFileSync(p, "utf8").split("\n")[0] + "\n")],
  ];
  const reads: [string, string[], Parameters<typeof readEvents>[1]][] = [
    ["all.jsonl", [], {}],
    ["type-claimed.jsonl", ["--type", "claimed"], { type: "claimed" }],
    [`agent-${agentKey("alice")}.jsonl`, ["--agent", "alice"], { agent: "alice" }],
  ];
  // Each build from scratch writes its key files under a generation of its own (the manifest's
  // `gen`, part of their names): the file named here is the current manifest's.
  const current = (file: string) => {
    const gen: number = manifest(repo).gen;
    return join(dir, gen ? file.replace(/\.jsonl$/, `.${gen}.jsonl`) : file);
  };
  for (const [how, damage] of damages) {
    for (const [file, args, filter] of reads) {
      const want = await walked(repo, filter);
      assert.equal(events(repo, ...args), want, "through a sound index");
      damage(current(file));
      assert.equal(events(repo, ...args), want, `${file} ${how}`);
      assert.is(readFileSync(current(file), "utf8").split("\n").length - 1, want.length, `${file} written anew`);
    }
    // stats reads stats.jsonl: the same damage there.
    const want = JSON.parse(JSON.stringify(computeStats(await walked(repo), { since: null, now: new Date(plus(30 * MIN)) })));
    const stats = () => {
      const { drift: _d, negotiation: _n, remote: _r, ...got } = at(repo, "reader", 30 * MIN, ["stats", "--json"]).json;
      return got;
    };
    assert.equal(stats(), want, "stats through a sound index");
    damage(current("stats.jsonl"));
    assert.equal(stats(), want, `stats.jsonl ${how}`);
    // stats --since reads counted.jsonl too (the times of the events it only counts): the same there.
    const since = plus(2 * MIN);
    const wantSince = JSON.parse(JSON.stringify(computeStats(await walked(repo), { since: new Date(since), now: new Date(plus(30 * MIN)) })));
    const statsSince = () => {
      const { drift: _d, negotiation: _n, remote: _r, ...got } = at(repo, "reader", 30 * MIN, ["stats", "--json", "--since", since]).json;
      return got;
    };
    assert.equal(statsSince(), wantSince, "stats --since through a sound index");
    assert.ok(readFileSync(current("counted.jsonl"), "utf8").length > 0, "the history holds events stats only counts");
    damage(current("counted.jsonl"));
    assert.equal(statsSince(), wantSince, `counted.jsonl ${how}`);
  }
});

test("events of one time on several refs come in the refs' order, as the walk gives them", async () => {
  const r = tempRepo();
  await storeTasks(by(r, "lead", 0), [{ id: "x", objective: "one" }]);
  // At one time: x's second event (its second line) and y's first, on a ref after x's.
  await storeClaim(by(r, "alice", MIN), "x");
  await storeTasks(by(r, "lead", MIN), [{ id: "y", objective: "two" }]);
  const want = await walked(r);
  const same = want.filter((e: { at: string }) => e.at === plus(MIN)).map((e: { type: string; task: string }) => `${e.type} ${e.task}`);
  assert.ok(same.indexOf("claimed x") >= 0 && same.indexOf("claimed x") < same.indexOf("created y"), same.join(", "));
  assert.equal(events(r), want);
  assert.equal(events(r, "--limit", "2"), want.slice(-2));
});

test("where the index cannot be written, events and stats read the history directly", async () => {
  const r = tempRepo();
  await storeTasks(by(r, "lead", 0), [{ id: "x", objective: "one" }]);
  await storeClaim(by(r, "alice", MIN), "x");
  // A file where the index folder should be: nothing can be written there.
  rmSync(join(r, ".git/handoff"), { recursive: true, force: true });
  writeFileSync(join(r, ".git/handoff"), "not a folder");
  assert.equal(events(r, "--agent", "alice"), await walked(r, { agent: "alice" }));
  assert.is(at(r, "reader", 10 * MIN, ["stats", "--json"]).json.claims.granted, 1);
});

test("stats through the index equals stats over the walked history", async () => {
  const r = tempRepo();
  await storeTasks(by(r, "lead", 0), [{ id: "p", objective: "base" }]);
  await storeTasks(by(r, "lead", MIN), [{ id: "q", objective: "after p", after: ["p"] }]);
  await storeClaim(by(r, "alice", 2 * MIN), "p");
  const refused = cli(["claim", "p"], { cwd: r, agent: "bob", env: { HANDOFF_NOW: plus(3 * MIN) } });
  assert.is.not(refused.code, 0);
  await storeDone(by(r, "alice", 4 * MIN), "p", { commit: "HEAD" });
  await storeClaim(by(r, "bob", 5 * MIN), "q");
  for (const since of [undefined, plus(3 * MIN)]) {
    const args = ["stats", "--json", ...(since ? ["--since", since] : [])];
    // drift, negotiation and remote traffic come from elsewhere (negotiation-stats.ts, the traffic log).
    const { drift: _d, negotiation: _n, remote: _r, ...got } = at(r, "reader", 10 * MIN, args).json;
    const want = computeStats(await walked(r), { since: since ? new Date(since) : null, now: new Date(plus(10 * MIN)) });
    assert.equal(got, JSON.parse(JSON.stringify(want)));
    assert.equal(got.claims, { granted: since ? 1 : 2, refused_duplicate: 1, refused_blocked: 0 });
  }
  // Again, now served by an index that already exists.
  const { drift: _d, negotiation: _n, remote: _r, ...again } = at(r, "reader", 10 * MIN, ["stats", "--json"]).json;
  assert.equal(again, JSON.parse(JSON.stringify(computeStats(await walked(r), { since: null, now: new Date(plus(10 * MIN)) }))));
  // Events stats only counts (renewals) added to refs the index holds already: the update adds
  // them to what each ref's entry counts, and a task with none before (p: created, claimed, done).
  await storeClaim(by(r, "bob", 6 * MIN), "q");
  at(r, "reader", 10 * MIN, ["stats", "--json"]); // the index takes q's first renewal
  await storeClaim(by(r, "bob", 7 * MIN), "q");
  await storeTasks(by(r, "lead", 8 * MIN), [{ id: "s", objective: "plain" }]);
  for (const since of [undefined, plus(6 * MIN + 1)]) {
    const { drift: _d2, negotiation: _n2, remote: _r2, ...later } = at(r, "reader", 10 * MIN, ["stats", "--json", ...(since ? ["--since", since] : [])]).json;
    const want = JSON.parse(JSON.stringify(computeStats(await walked(r), { since: since ? new Date(since) : null, now: new Date(plus(10 * MIN)) })));
    assert.equal(later, want, `after more events, since ${since}`);
    assert.is(later.events, (await walked(r)).filter((e: { at: string }) => !since || e.at >= since).length);
  }
});

test("a ref copied from another: stats counts the commits they share once, as the walk does", async () => {
  // The times stats only counts (renewals here) are kept per ref, not per commit: summed over both
  // refs, the shared ones counted twice (7 events where the walk reads 4).
  for (const indexFirst of [true, false]) {
    const r = tempRepo();
    await storeTasks(by(r, "lead", 0), [{ id: "p", objective: "base" }]);
    await storeClaim(by(r, "alice", MIN), "p");
    await storeClaim(by(r, "alice", 2 * MIN), "p");
    await storeClaim(by(r, "alice", 3 * MIN), "p");
    if (indexFirst) at(r, "reader", 10 * MIN, ["stats", "--json"]);
    gitOut(r, "update-ref", "refs/handoff/tasks/copy", "refs/handoff/tasks/p");
    // And the original moves on: a part shared, a part its own.
    await storeClaim(by(r, "alice", 4 * MIN), "p");
    for (const since of [undefined, plus(2 * MIN)]) {
      const { drift: _d, negotiation: _n, remote: _r, ...got } = at(r, "reader", 10 * MIN, ["stats", "--json", ...(since ? ["--since", since] : [])]).json;
      const want = JSON.parse(JSON.stringify(computeStats(await walked(r), { since: since ? new Date(since) : null, now: new Date(plus(10 * MIN)) })));
      assert.equal(got, want, `index built ${indexFirst ? "before" : "after"} the copy, since ${since}`);
    }
    // The copy gone, the index serves stats again, and counts as the walk does.
    gitOut(r, "update-ref", "-d", "refs/handoff/tasks/copy");
    const { drift: _d, negotiation: _n, remote: _r, ...got } = at(r, "reader", 10 * MIN, ["stats", "--json"]).json;
    assert.equal(got, JSON.parse(JSON.stringify(computeStats(await walked(r), { since: null, now: new Date(plus(10 * MIN)) }))));
    assert.not.ok(manifest(r).shared, "no refs share commits now");
  }
});

test("stats of events at one instant do not depend on when the index was built", async () => {
  // An index built before the last write lists that write after the others; a walk lists events
  // in the refs' order. At one instant (a scripted clock) stats counted q as blocked one way only.
  const run = async (indexFirst: boolean) => {
    const r = tempRepo();
    await storeTasks(by(r, "lead", 0), [{ id: "p", objective: "base" }]);
    await storeTasks(by(r, "alice", 0), [{ id: "q", objective: "after p", after: ["p"] }]);
    if (indexFirst) at(r, "alice", 0, ["stats", "--json"]);
    await storeDone(by(r, "alice", 0), "p");
    const { drift: _d, negotiation: _n, remote: _r, ...stats } = at(r, "reader", 0, ["stats", "--json"]).json;
    return stats;
  };
  assert.equal(await run(true), await run(false));
});

test.run();
