// Every MCP tool, in process (the SDK's in-memory transport), including refusals: the same codes,
// holder and suggestions as the CLI, and no ref changed by a refused call.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, handoffRefs, tempRepo } from "./support/repo.ts";
import { inProcess, type McpHandle } from "./support/mcp.ts";

const open: McpHandle[] = [];
async function agent(repo: string, name: string, o: Parameters<typeof inProcess>[1] = {}): Promise<McpHandle> {
  const h = await inProcess(repo, { agent: name, ...o });
  open.push(h);
  return h;
}
test.after.each(async () => {
  for (const h of open.splice(0)) await h.close();
});
test.after(cleanupTemp);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const EXPECTED_TOOLS = [
  "load_context", "overview", "events", "create_task", "get_task", "list_tasks", "ready_tasks",
  "claim_task", "claim_next", "renew_task", "release_task", "complete_task", "fail_task", "reclaim_task", "cancel_task",
  "wait_task", "watch",
  "lease_files", "check_files", "release_files", "handoff", "inbox", "ack_handoff", "request_release", "answer_request", "list_agents",
  "add_memory", "list_memories", "get_doc", "put_doc",
  "review_queue", "accept_review", "reject_review", "depend", "undepend", "declare_session", "list_leases", "conflicts", "stats", "sync",
];

test("lists every tool with a description for agents and input and output schemas", async () => {
  const alice = await agent(tempRepo(), "alice");
  const { tools } = await alice.client.listTools();
  assert.equal(tools.map((t) => t.name).sort(), [...EXPECTED_TOOLS].sort());
  for (const t of tools) {
    assert.ok((t.description ?? "").length > 80, `${t.name} has a real description`);
    assert.is(t.inputSchema.type, "object");
    assert.is(t.outputSchema?.type, "object", `${t.name} has an output schema`);
    assert.ok(t.outputSchema?.properties?.error, `${t.name} output schema carries the error body`);
  }
  const claim = tools.find((t) => t.name === "claim_task")!;
  assert.equal(claim.inputSchema.required, ["id"]);
  assert.match(claim.description!, /held_by_other/);
});

test("create, get, list and ready_tasks (best first)", async () => {
  const repo = tempRepo();
  const alice = await agent(repo, "alice");
  const low = (await alice.ok("create_task", { objective: "write docs", id: "docs" })).task;
  assert.is(low.id, "docs");
  assert.is(low.status, "todo");
  assert.is(low.created_by, "alice");
  const high = (await alice.ok("create_task", { objective: "fix the parser", priority: 5, scope: ["src/parser/**"] })).task;
  assert.match(high.id, /^t-[0-9a-z]{8}$/);
  assert.equal(high.scope, ["src/parser/**"]);
  assert.is(gitOut(repo, "rev-parse", "refs/handoff/tasks/docs").length, 40, "stored as a ref");

  const got = await alice.ok("get_task", { id: "docs" });
  assert.is(got.task.objective, "write docs");
  const listed = await alice.ok("list_tasks");
  assert.is(listed.total, 2);
  assert.equal(listed.tasks.map((t: any) => t.id).sort(), ["docs", high.id].sort());
  const ready = await alice.ok("ready_tasks");
  assert.equal(ready.tasks.map((t: any) => t.id), [high.id, "docs"]);

  // the CLI sees what the MCP wrote, field for field
  const shown = cli(["task", "show", "docs", "--json"], { cwd: repo });
  assert.equal(shown.json, got.task);

  const exists = await alice.refused("create_task", { objective: "again", id: "docs" });
  assert.is(exists.code, "exists");
  const empty = await alice.refused("create_task", { objective: "   " });
  assert.is(empty.code, "invalid_input");
});

test("claim_task: the holder wins; another agent is refused with the holder, expiry and suggestions", async () => {
  const repo = tempRepo();
  const alice = await agent(repo, "alice");
  const bob = await agent(repo, "bob");
  await alice.ok("create_task", { objective: "parser", id: "parser" });
  const claimed = (await alice.ok("claim_task", { id: "parser", ttl: "10m" })).task;
  assert.is(claimed.status, "claimed");
  assert.is(claimed.claim.agent, "alice");
  assert.is(claimed.claim.fence, 1);

  const before = handoffRefs(repo);
  const r = await bob.call("claim_task", { id: "parser" });
  assert.is(r.isError, true);
  const err = (r.structuredContent as any).error;
  assert.is(err.code, "held_by_other");
  assert.is(err.recoverable, true);
  assert.is(err.data.holder, "alice");
  assert.is(err.data.task, "parser");
  assert.is(err.data.expires_at, claimed.claim.expires_at);
  assert.equal(err.suggestions.map((s: any) => s.action), ["wait", "negotiate", "work_elsewhere"]);
  // suggestions name the tools to call, not CLI commands
  assert.match(err.suggestions[1].detail, /request_release \{"agent": "alice", "release": "parser"\}/);
  assert.match(err.suggestions[2].detail, /claim_next/);
  assert.not.match(JSON.stringify(err.suggestions), /git handoff/);
  assert.match((r.content[0] as any).text, /held_by_other: task parser is held by alice/);
  assert.is(handoffRefs(repo), before, "a refused claim changes no ref");

  // the same refusal the CLI gives
  const viaCli = cli(["claim", "parser", "--json"], { cwd: repo, agent: "bob" });
  assert.is(viaCli.code, 3);
  assert.is(viaCli.json.error.code, err.code);
  assert.is(viaCli.json.error.data.holder, err.data.holder);
  assert.equal(viaCli.json.error.data, err.data);

  // claiming what you hold renews it
  const again = (await alice.ok("claim_task", { id: "parser" })).task;
  assert.is(again.claim.fence, 1);
});

test("claim_next takes the best ready task; no_task_ready when there is none", async () => {
  const repo = tempRepo();
  const alice = await agent(repo, "alice");
  const bob = await agent(repo, "bob");
  const none = await alice.refused("claim_next");
  assert.is(none.code, "no_task_ready");
  assert.is(none.recoverable, true);
  await alice.ok("create_task", { objective: "low", id: "low" });
  await alice.ok("create_task", { objective: "high", id: "high", priority: 3 });
  assert.is((await bob.ok("claim_next")).task.id, "high");
  assert.is((await alice.ok("claim_next")).task.id, "low");
  const carol = await agent(repo, "carol"); // alice is at her capacity of one: ask someone free
  assert.is((await carol.refused("claim_next")).code, "no_task_ready");
});

test("renew, release, complete, fail, reclaim and their refusals", async () => {
  const repo = tempRepo();
  const alice = await agent(repo, "alice");
  const bob = await agent(repo, "bob");
  for (const id of ["a", "b", "c"]) await alice.ok("create_task", { objective: `task ${id}`, id });

  assert.is((await alice.refused("renew_task", { id: "a" })).code, "not_holder");
  const first = (await alice.ok("claim_task", { id: "a", ttl: "1m" })).task;
  const renewed = (await alice.ok("renew_task", { id: "a", ttl: "2h" })).task;
  assert.ok(Date.parse(renewed.claim.expires_at) > Date.parse(first.claim.expires_at) + 3_000_000);
  const bobRenew = await bob.refused("renew_task", { id: "a" });
  assert.is(bobRenew.code, "held_by_other");
  assert.is(bobRenew.data.holder, "alice");
  assert.is((await bob.refused("release_task", { id: "a" })).code, "held_by_other");
  assert.is((await bob.refused("complete_task", { id: "a" })).code, "held_by_other");
  assert.is((await bob.refused("fail_task", { id: "a", reason: "x" })).code, "held_by_other");

  const released = (await alice.ok("release_task", { id: "a" })).task;
  assert.is(released.status, "todo");
  assert.is(released.claim, null);
  assert.is((await alice.refused("release_task", { id: "a" })).code, "not_holder");

  await bob.ok("claim_task", { id: "a" });
  const done = (await bob.ok("complete_task", { id: "a", commit: "HEAD", note: "merged" })).task;
  assert.is(done.status, "done");
  assert.is(done.result.commit, gitOut(repo, "rev-parse", "HEAD"));
  assert.is(done.result.note, "merged");
  const final = await alice.refused("claim_task", { id: "a" });
  assert.is(final.code, "final_state");
  assert.is(final.recoverable, false);

  await alice.ok("claim_task", { id: "b" });
  const failed = (await alice.ok("fail_task", { id: "b", reason: "upstream API is gone" })).task;
  assert.is(failed.status, "failed");
  assert.is(failed.result.reason, "upstream API is gone");
  assert.is((await alice.refused("fail_task", { id: "c", reason: "  " })).code, "invalid_input");

  assert.is((await bob.refused("reclaim_task", { id: "c", reason: "stuck" })).code, "not_holder");
  await alice.ok("claim_task", { id: "c" });
  const reclaimed = (await bob.ok("reclaim_task", { id: "c", reason: "alice is gone" })).task;
  assert.is(reclaimed.status, "todo");
  const bad = await bob.refused("complete_task", { id: "c", commit: "no-such-rev" });
  assert.is(bad.code, "invalid_input");

  await alice.ok("claim_task", { id: "c" });
  const notYours = await bob.refused("cancel_task", { id: "c", reason: "obsolete" });
  assert.is(notYours.code, "held_by_other");
  assert.is(notYours.data.holder, "alice");
  const cancelled = (await alice.ok("cancel_task", { id: "c", reason: "obsolete" })).task;
  assert.is(cancelled.status, "cancelled");
  assert.is((await alice.refused("cancel_task", { id: "c", reason: "again" })).code, "final_state");
});

test("bad input: unsafe ids and unknown tasks are refused, schema violations are errors, no ref changes", async () => {
  const repo = tempRepo();
  const alice = await agent(repo, "alice");
  await alice.ok("create_task", { objective: "x", id: "x" });
  const before = handoffRefs(repo);
  for (const id of ["../x", "a/../../heads/main", "x.lock", "@{", "a b", "a\u0001", "y".repeat(300)]) {
    const e = await alice.refused("claim_task", { id });
    assert.is(e.code, "invalid_input", id);
    assert.is((await alice.refused("create_task", { objective: "o", id })).code, "invalid_input", id);
  }
  assert.is((await alice.refused("get_task", { id: "nope" })).code, "not_found");
  assert.is((await alice.refused("claim_task", { id: "nope" })).code, "not_found");
  assert.is((await alice.refused("claim_task", { id: "x", ttl: "soon" })).code, "invalid_input");
  assert.is((await alice.refused("events", { since: "yesterday" })).code, "invalid_input");
  assert.is((await alice.refused("create_task", { objective: "o".repeat(5000) })).code, "invalid_input");
  // wrong types never reach the store; the SDK's own errors get the same structured body
  const typed = await alice.refused("create_task", { objective: "o", priority: "high" });
  assert.is(typed.code, "invalid_input");
  assert.match(typed.message, /priority/);
  const two = await alice.refused("create_task", { objective: 5, priority: "high" });
  assert.match(two.message, /objective.*; .*priority|priority.*; .*objective/);
  assert.not.match(two.message, /\n/, "one line, as every refusal");
  assert.is((await alice.refused("claim_task", {})).code, "invalid_input");
  assert.is((await alice.refused("claim_task", { id: "x", extra: { deep: 1 }, ttl: 5 })).code, "invalid_input");
  assert.is((await alice.refused("list_tasks", { status: "bogus" })).code, "invalid_input");
  assert.is((await alice.refused("ready_tasks", { limit: 0 })).code, "invalid_input");
  assert.is((await alice.refused("events", { type: "exploded" })).code, "invalid_input");
  assert.is((await alice.refused("watch", { claim: true, ttl: "soon", timeout_seconds: 5 })).code, "invalid_input");
  assert.is((await alice.refused("watch", { ttl: "-rf", timeout_seconds: 5 })).code, "invalid_input", "refused without claim too");
  assert.is((await alice.refused("wait_task", { id: "x", timeout_seconds: -1 })).code, "invalid_input");
  // An argument a tool does not take is refused, not dropped: a misspelt filter would list everything,
  // a misspelt option claim with defaults.
  const misspelt = await alice.refused("list_tasks", { staus: "todo" });
  assert.is(misspelt.code, "invalid_input");
  assert.match(misspelt.message, /Unrecognized key: "staus"/);
  assert.is((await alice.refused("claim_task", { id: "x", tll: "5m" })).code, "invalid_input");
  assert.is((await alice.refused("conflicts", { verbose: true })).code, "invalid_input", "a tool without arguments");
  const unknown = await alice.refused("take_over_the_world", {});
  assert.is(unknown.code, "usage");
  assert.match(unknown.message, /not found/);
  assert.is(handoffRefs(repo), before);
});

test("a corrupt ref under refs/handoff/ is an error for that task and a warning in listings", async () => {
  const repo = tempRepo();
  const alice = await agent(repo, "alice");
  await alice.ok("create_task", { objective: "fine", id: "fine" });
  const blob = gitOut(repo, "hash-object", "-w", "--stdin");
  gitOut(repo, "update-ref", "refs/handoff/tasks/broken", blob);
  const before = handoffRefs(repo);
  const e = await alice.refused("get_task", { id: "broken" });
  assert.is(e.code, "corrupt_state");
  assert.match(e.message, /refs\/handoff\/tasks\/broken/);
  assert.is((await alice.refused("claim_task", { id: "broken" })).code, "corrupt_state");
  const listed = await alice.ok("list_tasks");
  assert.equal(listed.tasks.map((t: any) => t.id), ["fine"]);
  assert.is(listed.problems.length, 1);
  assert.is((await alice.ok("overview")).problems.length, 1);
  const events = await alice.ok("events");
  assert.equal(events.events.map((ev: any) => ev.task), ["fine"], "the other refs' events still come");
  assert.is(events.problems.length, 1);
  assert.match(events.problems[0], /refs\/handoff\/tasks\/broken/);
  assert.is((await alice.ok("claim_next")).task.id, "fine");
  assert.is(handoffRefs(repo).split("\n").find((l) => l.includes("broken")), before.split("\n").find((l) => l.includes("broken")));
});

test("overview and events", async () => {
  const repo = tempRepo();
  const alice = await agent(repo, "alice");
  const bob = await agent(repo, "bob");
  await alice.ok("create_task", { objective: "one", id: "one" });
  await alice.ok("create_task", { objective: "two", id: "two" });
  await alice.ok("claim_task", { id: "one", ttl: "2m" });
  await bob.ok("claim_task", { id: "two" });
  await bob.ok("complete_task", { id: "two" });

  const o = await alice.ok("overview");
  assert.is(o.counts.claimed, 1);
  assert.is(o.counts.done, 1);
  assert.equal(o.holders.map((h: any) => h.agent), ["alice"]);
  assert.equal(o.expiring_soon.map((h: any) => h.task), ["one"]);
  assert.is(o.me.agent, "alice");

  const all = (await alice.ok("events")).events;
  assert.equal(all.map((e: any) => `${e.type} ${e.task}`).filter((l: string) => l.endsWith("two")), ["created two", "claimed two", "done two"]);
  const onlyDone = (await alice.ok("events", { type: "done" })).events;
  assert.equal(onlyDone.map((e: any) => e.task), ["two"]);
  const byBob = (await alice.ok("events", { agent: "bob" })).events;
  assert.ok(byBob.every((e: any) => e.agent === "bob"));
  assert.is(byBob.length, 2);
  const last = (await alice.ok("events", { task: "one", limit: 1 })).events;
  assert.equal(last.map((e: any) => e.type), ["claimed"]);
  assert.is((await alice.ok("events", { since: "1h" })).events.length, all.length);
});

test("wait_task returns when another agent completes the task, and times out with final=false", async () => {
  const repo = tempRepo();
  const alice = await agent(repo, "alice");
  const bob = await agent(repo, "bob");
  await alice.ok("create_task", { objective: "w", id: "w" });
  await alice.ok("claim_task", { id: "w" });

  const timedOut = await bob.ok("wait_task", { id: "w", timeout_seconds: 0.3 });
  assert.is(timedOut.final, false);
  assert.is(timedOut.task.status, "claimed");
  assert.ok(timedOut.waited_ms >= 250);

  const waiting = bob.ok("wait_task", { id: "w", timeout_seconds: 30 });
  await sleep(300);
  await alice.ok("complete_task", { id: "w", note: "all yours" });
  const r = await waiting;
  assert.is(r.final, true);
  assert.is(r.task.status, "done");
  assert.ok(r.waited_ms < 25_000);
  assert.is((await bob.refused("wait_task", { id: "missing" })).code, "not_found");
});

test("a waiting call reports progress when the client asks for it, and a cancelled wait leaves the server responsive", async () => {
  const repo = tempRepo();
  const alice = await agent(repo, "alice");
  await alice.ok("create_task", { objective: "p", id: "p" });
  await alice.ok("claim_task", { id: "p" });
  const seen: number[] = [];
  const r = await alice.client.callTool({ name: "wait_task", arguments: { id: "p", timeout_seconds: 2 } }, undefined, {
    onprogress: (p) => seen.push(p.progress),
    timeout: 60_000,
  });
  assert.is((r.structuredContent as any).final, false);
  assert.ok(seen.length >= 1, `progress notifications: ${seen.length}`);

  const abort = new AbortController();
  const pending = alice.client.callTool({ name: "watch", arguments: { timeout_seconds: 30 } }, undefined, { signal: abort.signal });
  await sleep(200);
  abort.abort();
  await pending.then(() => assert.unreachable("a cancelled call does not resolve"), () => {});
  assert.is((await alice.ok("get_task", { id: "p" })).task.claim.agent, "alice");
});

test("watch waits for work to become ready, and with claim: true takes it", async () => {
  const repo = tempRepo();
  const alice = await agent(repo, "alice");
  const bob = await agent(repo, "bob");
  const idle = await bob.ok("watch", { timeout_seconds: 0.3 });
  assert.is(idle.timed_out, true);
  assert.equal(idle.ready, []);

  const watching = bob.ok("watch", { claim: true, timeout_seconds: 30 });
  await sleep(300);
  await alice.ok("create_task", { objective: "new work", id: "new" });
  const got = await watching;
  assert.is(got.timed_out, false);
  assert.is(got.claimed.id, "new");
  assert.is(got.claimed.claim.agent, "bob");

  // an expiring lease makes a task ready without any ref moving
  await alice.ok("create_task", { objective: "short", id: "short" });
  await alice.ok("claim_task", { id: "short", ttl: "1s" });
  const expired = await bob.ok("watch", { timeout_seconds: 30 });
  assert.is(expired.timed_out, false);
  assert.equal(expired.ready.map((t: any) => t.id), ["short"]);
});

test("load_context: identity, held tasks, ready work; an agent argument names an unnamed server", async () => {
  const repo = tempRepo();
  const alice = await agent(repo, "alice");
  await alice.ok("create_task", { objective: "mine", id: "mine", priority: 1 });
  await alice.ok("create_task", { objective: "free", id: "free" });
  await alice.ok("claim_task", { id: "mine" });

  const ctx = await alice.ok("load_context");
  assert.is(ctx.agent.agent, "alice");
  assert.is(ctx.agent.scope, "ephemeral", "a temp repo is an ephemeral worktree");
  assert.is(ctx.agent.branch, "main");
  assert.is(ctx.agent_source, "flag");
  assert.equal(ctx.claimed.map((t: any) => t.id), ["mine"]);
  assert.equal(ctx.ready.map((t: any) => t.id), ["free"]);
  assert.is(ctx.session.registered, true, "load_context registers the agent");
  assert.match(gitOut(repo, "log", "-1", "--format=%s", "refs/handoff/agents/alice"), /heartbeat of alice/);
  assert.is(ctx.overview.counts.claimed, 1);

  // flag wins over the argument
  const ignored = await alice.ok("load_context", { agent: "mallory" });
  assert.is(ignored.agent.agent, "alice");

  // a server started without a name takes the one load_context gives
  const anon = await inProcess(repo, {});
  open.push(anon);
  const derived = await anon.ok("load_context");
  assert.is(derived.agent_source, "derived");
  const named = await anon.ok("load_context", { agent: "carol", session_id: "s-1" });
  assert.is(named.agent.agent, "carol");
  assert.is(named.agent_source, "load_context");
  assert.is(named.session.session_id, "s-1");
  assert.match(gitOut(repo, "show", "refs/handoff/agents/carol:agent.json"), /"session": "s-1"/);
  assert.is((await anon.ok("claim_task", { id: "free" })).task.claim.agent, "carol");
  assert.is((await anon.refused("load_context", { agent: "../evil" })).code, "invalid_input");

  // HANDOFF_AGENT in the client's config names the server too
  const env = await inProcess(repo, { env: { HANDOFF_AGENT: "dave" } });
  open.push(env);
  const fromEnv = await env.ok("load_context", { agent: "erin" });
  assert.is(fromEnv.agent.agent, "dave");
  assert.is(fromEnv.agent_source, "env");
});

test("a server in a linked worktree shares the tasks and derives its own agent name", async () => {
  const repo = tempRepo();
  const wt = join(repo, "..", `${repo.split("/").pop()}-wt`);
  gitOut(repo, "worktree", "add", "-q", "-b", "side", wt);
  try {
    const main = await agent(repo, "lead");
    await main.ok("create_task", { objective: "shared", id: "shared" });
    const side = await inProcess(wt, {});
    open.push(side);
    const ctx = await side.ok("load_context");
    assert.match(ctx.agent.agent, new RegExp(`\\.${wt.split("/").pop()!.slice(0, 24).replace(/[.-]+$/, "")}$`));
    assert.is(ctx.agent.branch, "side");
    assert.is(ctx.agent.worktree, wt);
    const t = (await side.ok("claim_task", { id: "shared" })).task;
    assert.is(t.claim.agent, ctx.agent.agent);
    assert.is((await main.refused("claim_task", { id: "shared" })).data.holder, ctx.agent.agent);
  } finally {
    gitOut(repo, "worktree", "remove", "--force", wt);
  }
});

test("never stale: changes by the CLI, a new branch and a new .handoff.yaml are seen at the next call", async () => {
  const repo = tempRepo();
  const alice = await agent(repo, "alice");
  await alice.ok("create_task", { objective: "s", id: "s" });
  assert.is(cli(["claim", "s"], { cwd: repo, agent: "bob" }).code, 0);
  const held = await alice.refused("claim_task", { id: "s" });
  assert.is(held.data.holder, "bob");
  assert.is(cli(["release", "s"], { cwd: repo, agent: "bob" }).code, 0);

  gitOut(repo, "checkout", "-q", "-b", "feature");
  writeFileSync(join(repo, ".handoff.yaml"), "claim_ttl: 7m\n");
  const t = (await alice.ok("claim_task", { id: "s" })).task;
  assert.is(t.claim.branch, "feature");
  assert.is(t.claim.ttl_ms, 7 * 60_000);

  // a broken config is reported by every call, naming the line, until it is fixed
  writeFileSync(join(repo, ".handoff.yaml"), "claim_ttl: 7m\nmax_attempts: 0\n"); // (an unknown key only warns)
  const broken = await alice.refused("get_task", { id: "s" });
  assert.is(broken.code, "invalid_input");
  assert.match(broken.message, /\.handoff\.yaml line 2/);
  writeFileSync(join(repo, ".handoff.yaml"), "claim_ttl: 9m\n");
  assert.is((await alice.ok("renew_task", { id: "s" })).task.claim.ttl_ms, 7 * 60_000, "renew keeps the claim's ttl");
  assert.is((await alice.ok("release_task", { id: "s" })).task.status, "todo");
  assert.is((await alice.ok("claim_task", { id: "s" })).task.claim.ttl_ms, 9 * 60_000);
});

test.run();
