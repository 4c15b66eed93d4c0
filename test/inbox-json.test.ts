// `inbox --json` is one array of items of four kinds, each naming its `kind`: a client switches on
// it. MCP's inbox tool returns the same items, grouped, from the same presentation function.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, type CliResult } from "./support/repo.ts";
import { storeClaim, storeDone, storeSession, storeTasks } from "./support/seed.ts";
import { team } from "./support/team.ts";
import { inProcess } from "./support/mcp.ts";

test.after(cleanupTemp);

function ok(r: CliResult, what: string): CliResult {
  assert.is(r.code, 0, `${what}: ${r.stderr}`);
  return r;
}

test("bob's inbox holds a rejection, a release request, an answer and a handoff, each with its kind; MCP lists the same items", async () => {
  const t = team(["alice", "bob", "carol"]);
  const as = (agent: string, args: string[]) => ok(t.as(agent, args), `${agent} ${args.join(" ")}`);
  // The sessions, tasks, claims and alice's done: written in-process (support/seed.ts); what puts
  // items in bob's inbox (the reject, the asks, the answer, the handoff) stays processes.
  const by = (agent: string) => ({ cwd: t.wt[agent] ?? t.repo, agent });
  for (const a of ["alice", "bob", "carol"]) await storeSession(by(a), `${a}'s part`);
  await storeTasks(by("lead"), [
    { id: "form", objective: "the form" },
    { id: "api", objective: "the api" },
    { id: "ui", objective: "the ui" },
    { id: "schema", objective: "the schema" },
  ]);
  // A review of bob's work, rejected by alice.
  await storeClaim(by("bob"), "form");
  as("bob", ["done", "form", "--verify", "true"]);
  as("alice", ["review", "reject", "form", "--reason", "labels missing"]);
  // carol asks bob for a task he holds; bob asked carol for hers and got an answer.
  await storeClaim(by("bob"), "api");
  as("carol", ["ask", "bob", "--release", "api", "--reason", "I need it"]);
  await storeClaim(by("carol"), "ui");
  const asked = as("bob", ["ask", "carol", "--release", "ui", "--json"]).json;
  as("carol", ["answer", asked.id, "--keep", "--reason", "not yet"]);
  // A handoff addressed to bob.
  await storeClaim(by("alice"), "schema");
  await storeDone(by("alice"), "schema");
  as("alice", ["handoff", "schema", "--to", "bob", "--contract", "users have emails", "--note", "see the migration"]);

  const items = as("bob", ["inbox", "--json"]).json;
  assert.equal(items.map((i: { kind: string }) => i.kind), ["rejection", "release_request", "release_answer", "handoff"]);
  const h = items[3];
  // The handoff keeps every field it had; `kind` is added, nothing renamed.
  assert.is(h.id, "schema#1");
  assert.is(h.producer, "alice");
  assert.is(h.to, "bob");
  assert.is(h.reason, "addressed");
  assert.is(h.via, null);
  assert.is(h.task_status, "done");
  assert.is(h.untrusted.contract, "users have emails");
  assert.is(h.untrusted.note, "see the migration");
  assert.is(items[0].task, "form");
  assert.is(items[0].reason, "labels missing");
  assert.is(items[1].from, "carol");
  assert.is(items[2].id, asked.id);
  assert.is(items[2].answer.verdict, "keep");

  const mcp = await inProcess(t.wt.bob!, { agent: "bob" });
  try {
    const box = await mcp.ok("inbox");
    assert.equal([...box.rejections, ...box.requests, ...box.entries], items);
    const text = (await mcp.call("inbox")).content as { text: string }[];
    assert.match(text.map((c) => c.text).join("\n"), /review of form rejected by alice/);
  } finally {
    await mcp.close();
  }
});

test.run();
