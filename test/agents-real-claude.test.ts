// Claude Code itself (the pinned npm release), driven by a scripted model on 127.0.0.1, runs the
// hooks and the MCP server that `git handoff init --write` installs. Each test asserts what is on
// disk and what reached the model.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { claude, cost, holders, scenarioRepo } from "./agents/clients.ts";
import { cleanupTemp, cli, gitOut } from "./support/repo.ts";

test.after(cleanupTemp);

const read = (repo: string, f: string) => readFileSync(join(repo, f));

test("exclusive lease: Edit and Write are denied, the file is byte-identical, the reason names the holder", async () => {
  const repo = scenarioRepo();
  const before = read(repo, "locked.txt");
  const file = join(repo, "locked.txt");
  const s = await claude(repo, [
    { tools: [{ name: "Read", input: { file_path: file } }] },
    { tools: [{ name: "Edit", input: { file_path: file, old_string: "line one", new_string: "changed" } }, { name: "Write", input: { file_path: file, content: "overwritten\n" } }] },
    { text: "could not edit" },
  ], { env: { HANDOFF_AGENT: "bob" } });
  cost("claude", "exclusive lease denied", s.run.ms);
  assert.equal(read(repo, "locked.txt"), before);
  const results = s.model.toolResults();
  assert.is(results.length, 3, results.join("\n"));
  for (const r of results.slice(1)) assert.match(r, /^\[error\] git-handoff deny: locked\.txt is inside an exclusive lease on locked\.txt held by alice/);
  assert.equal(holders(repo, "locked.txt"), ["alice"]);
});

test("free file: edited with no objection, and the edit leases it to the agent", async () => {
  const repo = scenarioRepo();
  const file = join(repo, "free.txt");
  const s = await claude(repo, [
    { tools: [{ name: "Read", input: { file_path: file } }] },
    { tools: [{ name: "Edit", input: { file_path: file, old_string: "line one", new_string: "edited by bob" } }] },
    { text: "done" },
  ], { env: { HANDOFF_AGENT: "bob" } });
  cost("claude", "free file edited", s.run.ms);
  assert.is(read(repo, "free.txt").toString(), "free.txt edited by bob\n");
  const results = s.model.toolResults();
  assert.is(results.length, 2);
  assert.not.match(results[1]!, /error|git-handoff/);
  assert.not.match(s.model.seen(), /git-handoff (warn|deny)/);
  assert.equal(holders(repo, "free.txt"), ["bob"]);
});

test("shared lease: edited, and the warning naming the holder reaches the model", async () => {
  const repo = scenarioRepo();
  const file = join(repo, "shared.txt");
  const s = await claude(repo, [
    { tools: [{ name: "Read", input: { file_path: file } }] },
    { tools: [{ name: "Edit", input: { file_path: file, old_string: "line one", new_string: "edited too" } }] },
    { text: "done" },
  ], { env: { HANDOFF_AGENT: "bob" } });
  cost("claude", "shared lease warned", s.run.ms);
  assert.is(read(repo, "shared.txt").toString(), "shared.txt edited too\n");
  // additionalContext arrives in the next request, after the tool result.
  const last = JSON.stringify(s.model.requests.filter((r) => r.main).at(-1)!.body);
  assert.match(last, /git-handoff warn: shared\.txt is leased by alice/);
});

test("SessionStart: the agent's claims and others' exclusive files reach the model before it acts", async () => {
  const repo = scenarioRepo();
  assert.is(cli(["task", "add", "write the docs", "--id", "docs"], { cwd: repo, agent: "lead" }).code, 0);
  assert.is(cli(["claim", "docs"], { cwd: repo, agent: "bob" }).code, 0);
  const s = await claude(repo, [{ text: "nothing to do" }], { env: { HANDOFF_AGENT: "bob" } });
  cost("claude", "session start context", s.run.ms);
  const first = JSON.stringify(s.model.requests.find((r) => r.main)!.body);
  assert.match(first, /git-handoff: you are agent bob/);
  assert.match(first, /- docs: write the docs/);
  assert.match(first, /- locked\.txt: EXCLUSIVE, do not edit \(alice/);
});

test("MCP: claim_task through Claude Code in a trusted folder, allowed by the line init writes; the holder is the hook's agent", async () => {
  const repo = scenarioRepo();
  assert.is(cli(["task", "add", "fix the bug", "--id", "bug"], { cwd: repo, agent: "lead" }).code, 0);
  const file = join(repo, "free.txt");
  const s = await claude(repo, [
    { tools: [{ name: "mcp__git-handoff__claim_task", input: { id: "bug" } }] },
    { tools: [{ name: "Read", input: { file_path: file } }] },
    { tools: [{ name: "Edit", input: { file_path: file, old_string: "line one", new_string: "fixed" } }] },
    { text: "claimed and fixed" },
  ], { env: { HANDOFF_AGENT: "bob" }, trust: repo });
  cost("claude", "MCP claim_task", s.run.ms);
  const results = s.model.toolResults();
  assert.match(results[0]!, /"claimed_by":\s*"bob"|"agent":\s*"bob"/, results[0]);
  const task = cli(["task", "show", "bug", "--json"], { cwd: repo });
  assert.is(task.json.claim.agent, "bob");
  assert.equal(holders(repo, "free.txt"), ["bob"]);
});

test("linked worktree: the hook reads the shared leases and denies", async () => {
  const repo = scenarioRepo();
  const wt = `${repo}-wt`;
  gitOut(repo, "worktree", "add", "-q", "-b", "bob-work", wt);
  const before = read(wt, "locked.txt");
  const file = join(wt, "locked.txt");
  const s = await claude(wt, [
    { tools: [{ name: "Read", input: { file_path: file } }] },
    { tools: [{ name: "Edit", input: { file_path: file, old_string: "line one", new_string: "changed" } }] },
    { text: "could not edit" },
  ], { env: { HANDOFF_AGENT: "bob" } });
  cost("claude", "linked worktree denied", s.run.ms);
  assert.equal(read(wt, "locked.txt"), before);
  assert.match(s.model.toolResults()[1]!, /^\[error\] git-handoff deny: locked\.txt .* held by alice/);
});

test.run();
