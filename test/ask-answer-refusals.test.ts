// `ask` and `answer` refused: unknown agent, unknown request, someone else's request, option-like
// and malformed values, a gone holder. Each with its stable code and exit status, and no ref moved.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, handoffRefs } from "./support/repo.ts";
import { askTeam, ok } from "./support/ask-team.ts";
import { storeClaim, storeTasks } from "./support/seed.ts";
import { team } from "./support/team.ts";

test.after(cleanupTemp);

const setup = askTeam;

test("bad input is refused with a stable code and no ref changes", async () => {
  const t = await setup();
  const id = ok(t.as("bob", ["ask", "alice", "--release", "api", "--json"])).json.id;
  const before = handoffRefs(t.repo, { logs: true });
  const cases: [string, string[], number, RegExp][] = [
    ["bob", ["ask", "nobody", "--release", "api"], 4, /nobody holds no task or lease api, and has no session here/],
    ["bob", ["ask", "alice", "--release", "nothing-held"], 4, /alice holds no task or lease nothing-held/],
    ["bob", ["ask", "alice", "--release=--all"], 2, /--release needs a task id or a path/],
    ["bob", ["ask", "bob", "--release", "api"], 2, /cannot ask yourself/],
    ["bob", ["ask", "../x", "--release", "api"], 2, /invalid agent name/],
    ["alice", ["answer", "rq-zzzzzzzz", "--release"], 4, /no request rq-zzzzzzzz/],
    ["alice", ["answer", "not-an-id", "--release"], 2, /not a request id/],
    ["bob", ["answer", id, "--release"], 3, /asks alice, not bob/],
    ["alice", ["answer", id], 2, /exactly one of --release or --keep/],
    ["alice", ["answer", id, "--release", "--until", "2h"], 2, /--until goes with --keep/],
    ["alice", ["answer", "rq-zzzzzzzz", "--release", "--until", "2h"], 2, /--until goes with --keep/], // the command line first
    ["alice", ["answer", id, "--keep", "--until", "--x"], 2, /--until needs a time/],
    ["alice", ["answer", id, "--keep", "--until", "2020-01-01T00:00:00Z"], 2, /--until 2020-01-01T00:00:00\.000Z is already past/],
  ];
  for (const [agent, args, code, message] of cases) {
    const r = t.as(agent, [...args, "--json"]);
    assert.is(r.code, code, `${args.join(" ")}: ${r.stderr}${r.stdout}`);
    assert.match(r.stdout + r.stderr, message, args.join(" "));
    assert.is(handoffRefs(t.repo, { logs: true }), before, `${args.join(" ")} changed a ref`);
  }
  ok(t.as("alice", ["answer", id, "--keep"]));
  const again = t.as("alice", ["answer", id, "--release"]);
  assert.is(again.code, 3);
  assert.match(again.stderr, /already answered/);
});

test("an agent known only by its claim (no session) is asked like any other; a name known for nothing is not", async () => {
  const t = team(["alice", "bob"]);
  await storeTasks({ cwd: t.wt.alice!, agent: "alice" }, [{ id: "api", objective: "build the api", scope: ["src/api/**"] }]);
  await storeClaim({ cwd: t.wt.alice!, agent: "alice" }, "api");
  const id = ok(t.as("bob", ["ask", "alice", "--release", "api", "--json"]), "ask").json.id;
  const inbox = ok(t.as("alice", ["inbox", "--json"])).json;
  assert.ok(inbox.some((e: { kind: string; id: string }) => e.kind === "release_request" && e.id === id), JSON.stringify(inbox));
  const before = handoffRefs(t.repo, { logs: true });
  const r = t.as("bob", ["ask", "carol", "--release", "api"]);
  assert.is(r.code, 4, r.stderr);
  assert.match(r.stderr, /^git-handoff: carol holds no task or lease api, and has no session here \[not_found\]\n  fix_input: see who holds what: git handoff status; the agents with a session: git handoff agents\n$/);
  assert.is(handoffRefs(t.repo, { logs: true }), before);
});

test("a request to an agent that is gone says so and suggests reclaim", async () => {
  const t = await setup();
  ok(t.as("alice", ["session", "end"]));
  const r = t.as("bob", ["ask", "alice", "--release", "api", "--json"]);
  assert.is(r.code, 3);
  assert.is(r.json.error.code, "holder_gone");
  assert.match(r.json.error.message, /alice is gone/);
  assert.equal(r.json.error.suggestions.map((s: { action: string }) => s.action), ["reclaim"]);
  assert.match(r.json.error.suggestions[0].detail, /git handoff reclaim api --reason/);
});

test.run();
