// Suggestions in each front end's words: the core's CLI commands become tool calls for MCP
// clients, and the CLI keeps its commands.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { refusalFor, spell, steps, suggestionText, verificationFailure } from "../src/present/suggestions.ts";

// Every suggestion the core, store and sync layers word with a CLI command (as of this writing).
const CORE_SUGGESTIONS: [string, string][] = [
  ["take other work: git handoff claim --next", "take other work: claim_next"],
  ["take other work: git handoff ready --claim", "take other work: claim_next"],
  ["ask alice (in /src/app, branch main) to release it: git handoff release parser", 'ask alice (in /src/app, branch main) to release it: release_task {"id": "parser"}'],
  ["claim it first: git handoff claim parser", 'claim it first: claim_task {"id": "parser"}'],
  ["ask alice (in /src/app, branch main) to release it: git handoff ask alice --release parser", 'ask alice (in /src/app, branch main) to release it: request_release {"agent": "alice", "release": "parser"}'],
  ["ask bob to release it: git handoff ask bob --release 'src/api/**'", 'ask bob to release it: request_release {"agent": "bob", "release": "src/api/**"}'],
  ["answer it: git handoff answer rq-0a1b2c3d --keep", 'answer it: answer_request {"request": "rq-0a1b2c3d", "answer": "keep"}'],
  ["wait for the review: git handoff review accept|reject api", 'wait for the review: accept_review {"id": "api"} or reject_review {"id": "api", "reason": "what to fix"}'],
  [
    "ask bob, working on task api (git handoff task show api), to hand over or run: git handoff unlease 'src/api/**'",
    'ask bob, working on task api (get_task {"id": "api"}), to hand over or run: release_files {"paths": ["src/api/**"]}',
  ],
  ["work on another file or task; see who holds what: git handoff leases", "work on another file or task; see who holds what: list_leases"],
  ["see your leases: git handoff leases --agent bob", 'see your leases: list_leases {"agent": "bob"}'],
  ["wait until api is done (git handoff inbox shows the handoff)", "wait until api is done (inbox shows the handoff)"],
  ["remove an edge first: git handoff undepend a --on b", 'remove an edge first: undepend {"id": "a", "on": "b"}'],
  ["list tasks: git handoff task list", "list tasks: list_tasks"],
  ["see what awaits review: git handoff review", "see what awaits review: review_queue"],
  ["declare it: git handoff session start --objective TEXT", 'declare it: declare_session {"objective": "TEXT"}'],
  ["find the agent: git handoff agents (or leave out --to)", "find the agent: list_agents (or leave out --to)"],
  ["choose one: git handoff remote <name>", "a person chooses one in a shell (the CLI's remote verb); no tool sets it"],
  ["run git handoff sync", "run sync"],
];

test("each core suggestion names the tool for MCP clients and stays a command for the CLI", () => {
  for (const [cli, mcp] of CORE_SUGGESTIONS) {
    assert.is(suggestionText(cli, "mcp"), mcp);
    assert.is(suggestionText(cli, "cli"), cli);
    assert.not.match(suggestionText(cli, "mcp"), /git handoff/);
  }
});

test("a refusal for MCP keeps code and data; the message and the suggestions name tools", () => {
  const r = { code: "held_by_other" as const, message: "held by alice: git handoff claim x", data: { holder: "alice" }, suggestions: [{ action: "work_elsewhere" as const, detail: "take other work: git handoff claim --next" }] };
  const m = refusalFor(r, "mcp");
  assert.equal({ ...m, message: undefined, suggestions: undefined }, { ...r, message: undefined, suggestions: undefined });
  assert.is(m.message, 'held by alice: claim_task {"id": "x"}');
  assert.is(m.suggestions![0]!.detail, "take other work: claim_next");
  assert.is(refusalFor(r, "cli"), r);
  const plain = { code: "not_found" as const, message: "no task x" };
  assert.is(refusalFor(plain, "mcp"), plain, "nothing to say differently: the same refusal");
});

test("steps spell as a command or a tool call; verification_failed reads the same in both, but for the step", () => {
  assert.is(spell(steps.done("api"), "cli"), "git handoff done api");
  assert.is(spell(steps.done("api"), "mcp"), 'complete_task {"id": "api"}');
  const t: any = {
    id: "api",
    status: "claimed",
    claim: { agent: "alice" },
    review: { verification: { passed: false, timed_out: false, exit_code: 7, signal: null, duration_ms: 1500, command: "npm test" } },
  };
  const cli = verificationFailure(t, "cli");
  const mcp = verificationFailure(t, "mcp");
  assert.is(cli.message, "verification of api failed (exit 7) after 1.5s: npm test; recorded on the task, which stays with alice");
  assert.is(mcp.message, cli.message);
  assert.match(cli.suggestions![0]!.detail, /git handoff done api/);
  assert.match(mcp.suggestions![0]!.detail, /complete_task \{"id": "api"\}/);
});

test.run();
