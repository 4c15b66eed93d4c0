// Addresses route work to a kind of agent, a machine, or both; the queue is taken highest priority
// first, then oldest; bad input is refused before anything is written. Clones of one remote over
// smart HTTP, each declaring its machine with git config handoff.machine.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { addressMatches, parseAddress } from "../src/core/address.ts";
import { cli, gitOut, handoffRefs, tempDir } from "./support/repo.ts";
import { remoteForFile, POLL, remoteTask, script, start, stop, until } from "./support/handover.ts";
import { storeCancel, storeTasks } from "./support/seed.ts";

const net = remoteForFile(test, "addresses");

test("parsing and matching: the machine comes from the declaration, not from the name", () => {
  const to = (s: string) => {
    const p = parseAddress(s);
    if (!p.ok) throw new Error(p.message);
    return p.address;
  };
  assert.equal(to("codex@pc"), { kind: "codex", machine: "pc" });
  assert.equal(to("codex"), { kind: "codex", machine: null });
  assert.equal(to("@pc"), { kind: null, machine: "pc" });
  for (const bad of ["", "@", "a@b@c", "x/y", "codex@", "-x", "a..b"]) assert.is(parseAddress(bad).ok, false, bad);
  // codex@pc the agent, declared on laptop, is on laptop.
  assert.is(addressMatches(to("@pc"), { agent: "codex@pc", machine: "laptop" }), false);
  assert.is(addressMatches(to("@laptop"), { agent: "codex@pc", machine: "laptop" }), true);
  assert.is(addressMatches(to("codex"), { agent: "codex@pc", machine: "laptop" }), true);
  assert.is(addressMatches(to("codex@pc"), { agent: "codex", machine: "pc" }), true);
  assert.is(addressMatches(null, { agent: "anyone", machine: null }), true);
});

test("codex@m2 is taken by neither claude@m2 nor codex@m1; @m2 by any agent on m2; codex by codex anywhere", async () => {
  const m1 = net.clone("m1");
  const m2 = net.clone("m2");
  const lead = { cwd: m1, agent: "lead", push: true };
  for (const [id, to] of [["only-codex-m2", "codex@m2"], ["any-on-m2", "@m2"], ["codex-anywhere", "codex"]]) await storeTasks(lead, [{ id: id!, objective: id!, to: to! }]);

  const refused = (cwd: string, agent: string, id: string) => {
    const r = cli(["claim", id, "--json"], { cwd, agent });
    assert.is(r.code, 3, `${agent} ${id}: ${r.stderr}`);
    assert.is(r.json.error.code, "addressed_elsewhere");
    assert.match(r.stderr, `is addressed to`);
  };
  refused(m2, "claude@m2", "only-codex-m2");
  refused(m1, "codex@m1", "only-codex-m2");
  refused(m1, "codex@m1", "any-on-m2");
  refused(m1, "claude@m1", "codex-anywhere");
  // The name says m2, the clone says m1: the declaration wins.
  refused(m1, "claude@m2", "any-on-m2");
  assert.is(remoteTask(net.bare, "only-codex-m2").claim, null);

  // claim --next and ready skip what is addressed elsewhere.
  const ready = cli(["ready", "--json"], { cwd: m1, agent: "claude@m1" });
  assert.equal(ready.json, []);
  const next = cli(["claim", "--next", "--json"], { cwd: m1, agent: "claude@m1" });
  assert.is(next.code, 3);
  assert.is(next.json.error.code, "no_task_ready");

  assert.is(cli(["claim", "only-codex-m2"], { cwd: m2, agent: "codex@m2" }).code, 0);
  assert.is(cli(["claim", "--next", "--json"], { cwd: m2, agent: "claude@m2" }).json.id, "any-on-m2");
  assert.is(cli(["claim", "codex-anywhere", "--json"], { cwd: m1, agent: "codex@m1" }).json.claim.agent, "codex@m1");
  assert.is(remoteTask(net.bare, "only-codex-m2").claim.agent, "codex@m2");
  assert.equal(remoteTask(net.bare, "any-on-m2").to, { kind: null, machine: "m2" });
  // Declarations say where each agent is.
  assert.is(cli(["session", "start", "--objective", "x"], { cwd: m2, agent: "claude@m2" }).code, 0);
  const agents = gitOut(m2, "show", "refs/handoff/agents/claude@m2:agent.json");
  assert.is(JSON.parse(agents).machine, "m2");
  // No live claim left behind: a worker through the remote counts their holders as racers and
  // spreads over the best few instead of taking the queue in order (the next test).
  for (const id of ["only-codex-m2", "any-on-m2", "codex-anywhere"]) await storeCancel(lead, id, "test over");
});

test("a worker that sees no racer takes the queue highest priority first, then oldest", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  // One command each, as mid-old is older than mid-new.
  for (const [id, p] of [["low", 1], ["high", 5], ["mid-old", 3], ["mid-new", 3], ["elsewhere", 9]] as const) {
    await storeTasks({ cwd: a, agent: "lead", push: true }, [{ id, objective: id, priority: p, ...(id === "elsewhere" ? { to: "codex@m1" } : {}) }]);
  }
  const log = join(tempDir(), "order");
  const w = start(["worker", "--exec", script(`echo "$HANDOFF_TASK_ID" >> "${log}"`), "--poll", POLL], { cwd: b, agent: "codex@m2" });
  const order = () => {
    try {
      return readFileSync(log, "utf8").trim().split("\n");
    } catch {
      return [];
    }
  };
  await until(() => order().length >= 4 && (w.stderr().match(/: done /g) ?? []).length >= 4, "four tasks done");
  assert.is(await stop(w), 130);
  assert.equal(order(), ["high", "mid-old", "mid-new", "low"], w.stderr());
  assert.is(remoteTask(net.bare, "elsewhere").status, "todo");
});

test("bad --to, --priority, --context-file and bad worker options: exit 2, no ref changed anywhere", () => {
  const a = net.clone("m1");
  gitOut(a, "fetch", "-q", "origin", "+refs/handoff/*:refs/handoff/*");
  const before = handoffRefs(a);
  const remoteBefore = gitOut(net.bare, "for-each-ref", "refs/handoff/");
  const cases: [string[], RegExp][] = [
    [["wait", "--objective", "x", "--to", "a@b@c"], /--to "a@b@c"/],
    [["wait", "--objective", "x", "--to", "x/y"], /--to "x\/y"/],
    [["wait", "--objective", "x", "--to", "@"], /names no one/],
    [["task", "add", "x", "--to", "bad name"], /--to "bad name"/],
    [["wait", "--objective", "x", "--priority", "high"], /--priority must be a whole number/],
    [["wait", "--objective", "x", "--priority", "5000"], /--priority must be between/],
    [["wait", "--objective", "x", "--context-file", "missing.md"], /--context-file missing.md: no such file/],
    [["wait", "--objective", "x", "--file", "."], /is not a file/],
    [["wait", "--objective", "x", "--timeout", "soon"], /invalid --timeout/],
    [["wait"], /give --objective TEXT/],
    [["wait", "--id", "t-1", "--to", "codex"], /use them with --objective/],
    [["worker"], /worker needs --exec CMD/],
    [["worker", "--exec", "true", "--concurrency", "0"], /--concurrency must be between/],
    [["worker", "--exec", "true", "--once", "--concurrency", "2"], /--once runs one task: --concurrency goes without it/],
  ];
  for (const [args, message] of cases) {
    const r = cli(args, { cwd: a, agent: "alice" });
    assert.is(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(" "));
  }
  gitOut(a, "config", "handoff.machine", "no@pe");
  const badMachine = cli(["claim", "--next"], { cwd: a, agent: "alice" });
  assert.is(badMachine.code, 2);
  assert.match(badMachine.stderr, /git config handoff.machine is "no@pe"/);
  assert.is(handoffRefs(a), before);
  assert.is(gitOut(net.bare, "for-each-ref", "refs/handoff/"), remoteBefore);
});

test.run();
