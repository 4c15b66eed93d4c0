// The CLI's workflow through MCP: each tool added for parity, over a real SDK client on stdio,
// against what the CLI reads from the same repository. Every result opens with a summary, and
// refusals name tools, never CLI commands.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { overStdio, type McpHandle } from "./support/mcp.ts";
import { cleanupTemp, cli, gitOut, handoffRefs, tempDir, tempRepo } from "./support/repo.ts";
import { commitFile, team } from "./support/team.ts";

const open: McpHandle[] = [];
async function server(repo: string, agent: string): Promise<McpHandle> {
  const h = await overStdio(repo, { agent });
  open.push(h);
  return h;
}
test.after.each(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});
test.after(cleanupTemp);

/** Calls a tool and checks what every result must have: a one-line summary. */
async function ok(h: McpHandle, name: string, args: Record<string, unknown> = {}) {
  const r = await h.ok(name, args);
  assert.type(r.summary, "string", `${name} summary`);
  assert.ok(r.summary.length > 0 && !r.summary.includes("\n"), `${name} summary is one line: ${r.summary}`);
  return r;
}
async function refused(h: McpHandle, name: string, args: Record<string, unknown> = {}) {
  const r = await h.call(name, args);
  assert.is(r.isError, true, `${name} refused`);
  const s = r.structuredContent as any;
  assert.match(s.summary, /^refused \(/);
  assert.not.match(JSON.stringify(s.error.suggestions), /git handoff/, `${name} suggestions name tools, not CLI commands`);
  assert.not.match(JSON.stringify(s.error.suggestions), /(^|[\s:"])--[a-z]/, `${name} suggestions name no CLI option: ${JSON.stringify(s.error.suggestions)}`);
  return s.error;
}

test("create_task takes after, scope, exclusive and verify; ready_tasks shows blocked edges; depend / undepend as the CLI", async () => {
  const repo = tempRepo();
  const lead = await server(repo, "lead");
  const api = (await ok(lead, "create_task", { objective: "the API", id: "api", scope: ["src/api/**"], exclusive: true, verify: "true" })).task;
  assert.equal([api.scope, api.exclusive, api.verify], [["src/api/**"], true, "true"]);
  const client = (await ok(lead, "create_task", { objective: "the client", id: "client", after: ["api"] })).task;
  assert.equal(client.after, ["api"]);
  const missing = await refused(lead, "create_task", { objective: "x", after: ["nope"] });
  assert.is(missing.code, "not_found");

  const ready = await ok(lead, "ready_tasks");
  assert.equal(ready.tasks.map((t: any) => t.id), ["api"]);
  assert.equal(ready.blocked, [{ task: "client", objective: "the client", edges: [{ task: "client", waits_on: "api", status: "todo", holder: null, expires_at: null }] }]);
  assert.match(ready.summary, /1 ready to claim, best api; 1 blocked/);
  assert.equal(ready.next[0], { tool: "claim_task", arguments: { id: "api" }, why: "the best ready task" });

  const blocked = await refused(lead, "claim_task", { id: "client" });
  assert.is(blocked.code, "blocked");
  assert.ok(blocked.suggestions.some((s: any) => /claim_next|inbox/.test(s.detail)), JSON.stringify(blocked.suggestions));

  // Blocked on a task someone holds: ask them, or other work; no tool claims past a dependency.
  const holder = await server(repo, "hank");
  await ok(holder, "claim_task", { id: "api" });
  const held = await refused(lead, "claim_task", { id: "client" });
  assert.is(held.code, "blocked");
  assert.match(JSON.stringify(held.suggestions), /hank/);
  await ok(holder, "release_task", { id: "api" });
  const self = await holder.call("request_release", { agent: "hank", release: "api" });
  assert.match((self.structuredContent as any).error.message, /release_task or release_files/);

  const cycle = await refused(lead, "depend", { id: "api", on: "client" });
  assert.is(cycle.code, "cycle");
  assert.match(cycle.suggestions[0].detail, /undepend \{"id": "[a-z]+", "on": "[a-z]+"\}/);
  await ok(lead, "create_task", { objective: "docs", id: "docs" });
  assert.equal((await ok(lead, "depend", { id: "docs", on: "client" })).task.after, ["client"]);
  assert.equal(cli(["task", "show", "docs", "--json"], { cwd: repo, agent: "lead" }).json.after, ["client"]);
  const un = await ok(lead, "undepend", { id: "docs", on: "client" });
  assert.equal(un.task.after, []);
  assert.match(un.summary, /docs no longer waits on client/);

  // finishing the blocker through the review gate unblocks its dependent
  await ok(lead, "claim_task", { id: "api" });
  assert.is((await ok(lead, "complete_task", { id: "api" })).state, "review");
  // A reviewer other than the author accepts (self-review is refused unless review.allow_self).
  const reviewer = await server(repo, "reviewer");
  const accepted = await ok(reviewer, "accept_review", { id: "api" });
  await reviewer.close();
  assert.match(accepted.summary, /^accepted api: done; unblocked: client/);
  assert.equal((await ok(lead, "ready_tasks")).blocked, []);
});

test("ready_tasks leaves out tasks addressed to another kind of agent or another machine, as the CLI's ready does", async () => {
  const repo = tempRepo();
  const lead = await server(repo, "lead");
  await ok(lead, "create_task", { objective: "for codex", id: "cx", to: "codex", priority: 5 });
  await ok(lead, "create_task", { objective: "for another machine", id: "far", to: "@far-away", priority: 5 });
  await ok(lead, "create_task", { objective: "for anyone", id: "any" });
  const ready = await ok(lead, "ready_tasks");
  assert.equal(ready.tasks.map((t: any) => t.id), ["any"]);
  assert.is(ready.total, 1);
  assert.match(ready.summary, /^1 ready to claim, best any/);
  assert.equal(cli(["ready", "--json"], { cwd: repo, agent: "lead" }).json.map((t: any) => t.id), ["any"]);
  // A codex agent may take the one for codex (and, as the CLI says, not the other machine's).
  const codex = await server(repo, "codex");
  assert.equal((await ok(codex, "ready_tasks")).tasks.map((t: any) => t.id), ["cx", "any"]);
  assert.equal(cli(["ready", "--json"], { cwd: repo, agent: "codex" }).json.map((t: any) => t.id), ["cx", "any"]);
  // load_context's ready list is the same list.
  const context = await ok(lead, "load_context");
  assert.equal(context.ready.map((t: any) => t.id), ["any"]);
  assert.is(context.ready_total, 1);
  assert.equal((await ok(codex, "load_context")).ready.map((t: any) => t.id), ["cx", "any"]);
});

test("declare_session and load_context record objective, files and awaits; list_agents shows them", async () => {
  const repo = tempRepo();
  const alice = await server(repo, "alice");
  const d = await ok(alice, "declare_session", { objective: "the parser", files: ["src/parser/**"], awaits: "the lexer from bob" });
  assert.equal([d.agent.objective, d.agent.files, d.agent.awaits], ["the parser", ["src/parser/**"], "the lexer from bob"]);
  assert.ok(d.next.some((n: any) => n.tool === "lease_files"));
  const bob = await server(repo, "bob");
  const ctx = await ok(bob, "load_context", { objective: "the lexer", files: ["src/lexer.ts"] });
  assert.is(ctx.session.declared, true);
  assert.match(ctx.summary, /you are bob/);
  const plain = await ok(bob, "load_context");
  assert.is(plain.session.declared, false);
  const roster = await ok(alice, "list_agents");
  const byName = Object.fromEntries(roster.agents.map((a: any) => [a.agent, a]));
  assert.is(byName.alice.objective, "the parser");
  assert.is(byName.bob.objective, "the lexer");
  assert.equal(byName.bob.files, ["src/lexer.ts"]);
  const viaCli = cli(["agents", "--json"], { cwd: repo, agent: "carol" }).json;
  assert.ok(JSON.stringify(viaCli).includes("the lexer from bob"));
  const bad = await refused(alice, "load_context", { files: ["x"] });
  assert.is(bad.code, "invalid_input");
});

test("list_leases lists live leases; a check_files refusal suggests request_release and list_leases, not CLI commands", async () => {
  const repo = tempRepo();
  const alice = await server(repo, "alice");
  const bob = await server(repo, "bob");
  await ok(alice, "lease_files", { paths: ["src/api/**"], exclusive: true, reason: "reshaping the API" });
  await ok(bob, "lease_files", { paths: ["docs/"] });
  const all = await ok(bob, "list_leases");
  assert.equal(all.leases.map((l: any) => [l.pattern, l.agent, l.exclusive]).sort(), [["docs/**", "bob", false], ["src/api/**", "alice", true]]);
  assert.match(all.summary, /2 live leases \(1 exclusive\)/);
  assert.equal((await ok(bob, "list_leases", { agent: "alice" })).leases.length, 1);
  assert.equal(cli(["leases", "--json"], { cwd: repo, agent: "x" }).json.length, 2);
  const denied = await refused(bob, "check_files", { paths: ["src/api/server.ts"] });
  assert.is(denied.code, "held_by_other");
  const text = JSON.stringify(denied.suggestions);
  assert.match(text, /request_release \{\\"agent\\": \\"alice\\", \\"release\\": \\"src\/api\/\*\*\\"\}/);
  assert.match(text, /list_leases/);
  assert.is((await refused(bob, "list_leases", { agent: "no/such" })).code, "invalid_input");
});

test("conflicts predicts the conflict between two agents' branches, as the CLI does", async () => {
  const t = team(["alice", "bob"]);
  const alice = await overStdio(t.wt.alice!, { agent: "alice" });
  const bob = await overStdio(t.wt.bob!, { agent: "bob" });
  open.push(alice, bob);
  await ok(alice, "declare_session", { objective: "alice's part" });
  await ok(bob, "load_context", { objective: "bob's part" });
  commitFile(t.wt.alice!, "shared.txt", "line 1\nline 2 by alice\nline 3\n");
  commitFile(t.wt.bob!, "shared.txt", "line 1\nline 2 by bob\nline 3\n");
  const r = await ok(alice, "conflicts");
  assert.is(r.conflicting, 1);
  const pair = r.pairs.find((p: any) => p.conflicts.length);
  assert.equal([pair.a.branch, pair.b.branch, pair.conflicts], ["alice-work", "bob-work", ["shared.txt"]]);
  assert.match(r.summary, /^1 conflict predicted: alice-work \(alice\) x bob-work \(bob\) on shared.txt/);
  assert.equal(r.next.map((n: any) => n.tool), ["list_agents"]);
  const viaCli = t.as("lead", ["conflicts", "--json"]).json;
  assert.equal(viaCli.pairs.map((p: any) => p.conflicts), r.pairs.map((p: any) => p.conflicts));
});

test("conflicts, stats and sync answer as the CLI's verbs", async () => {
  const repo = tempRepo();
  const alice = await server(repo, "alice");
  const c = await ok(alice, "conflicts");
  assert.equal(c.summary, cli(["conflicts"], { cwd: repo, agent: "alice" }).stdout.trim().split("\n")[0]);
  await ok(alice, "create_task", { objective: "x", id: "x" });
  await ok(alice, "claim_task", { id: "x" });
  assert.is((await refused(await server(repo, "bob"), "claim_task", { id: "x" })).code, "held_by_other");
  const s = await ok(alice, "stats");
  const viaCli = cli(["stats", "--json"], { cwd: repo, agent: "alice" }).json;
  assert.equal({ ...s.claims }, viaCli.claims);
  assert.is(s.claims.refused_duplicate, 1);
  assert.is((await refused(alice, "stats", { since: "yesterday-ish" })).code, "invalid_input");

  const noRemote = await refused(alice, "sync");
  assert.is(noRemote.code, "not_found");
  const bare = tempDir();
  gitOut(bare, "init", "-q", "--bare");
  gitOut(repo, "remote", "add", "origin", bare);
  const synced = await ok(alice, "sync");
  assert.is(synced.remote, "origin");
  assert.ok(synced.pushed.includes("refs/handoff/tasks/x") || gitOut(bare, "for-each-ref", "refs/handoff/").includes("refs/handoff/tasks/x"));
});

test("bad input to the new tools: a one-line refusal with a stable code, and every ref left as it was", async () => {
  const repo = tempRepo();
  const a = await server(repo, "a");
  await ok(a, "create_task", { objective: "x", id: "x" });
  await ok(a, "create_task", { objective: "y", id: "y" });
  await ok(a, "declare_session", { objective: "testing" });
  const before = handoffRefs(repo, { logs: true });
  const cases: [string, Record<string, unknown>, string][] = [
    ["create_task", { objective: "z", verify: "npm test\nrm -rf /" }, "invalid_input"],
    ["create_task", { objective: "z", scope: ["../outside/**"] }, "invalid_input"],
    ["create_task", { objective: "z", id: "x" }, "exists"],
    ["depend", { id: "x", on: "x" }, "invalid_input"],
    ["depend", { id: "x", on: "nope" }, "not_found"],
    ["depend", { id: "x/../y", on: "y" }, "invalid_input"],
    ["undepend", { id: "x", on: "y" }, "not_found"],
    ["declare_session", { objective: "   " }, "invalid_input"],
    ["declare_session", {}, "invalid_input"],
    ["declare_session", { objective: "x", files: [""] }, "invalid_input"],
    ["declare_session", { objective: "x", files: ["a\u0007"] }, "invalid_input"],
    ["declare_session", { objective: "x", session_id: "s".repeat(500) }, "invalid_input"],
    ["declare_session", { objective: "x", awaits: "w".repeat(9000) }, "invalid_input"],
    ["accept_review", { id: "x" }, "wrong_state"],
    ["reject_review", { id: "x" }, "invalid_input"],
    ["wait_task", { id: "../x" }, "invalid_input"],
  ];
  for (const [tool, args, code] of cases) {
    const r = await a.call(tool, args);
    assert.is(r.isError, true, `${tool} ${JSON.stringify(args)}`);
    const s = r.structuredContent as any;
    assert.is(s.error.code, code, `${tool} ${JSON.stringify(args)}: ${s.error.message}`);
    assert.ok(!s.summary.includes("\n"), s.summary);
    // A tool's refusal names its arguments, not the CLI's options.
    assert.not.match(s.error.message, /(^|\s)--[a-z]/, `${tool}: ${s.error.message}`);
  }
  assert.is(handoffRefs(repo, { logs: true }), before);
});

test.run();
