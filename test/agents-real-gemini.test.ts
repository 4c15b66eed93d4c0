// Gemini CLI itself (the pinned npm release), driven by a scripted model on 127.0.0.1, runs the
// hooks and the MCP server that `git handoff init --write` installs. Each test asserts what is on
// disk and what reached the model. Gemini starts slowly (seconds), so one session serves several.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cost, gemini, holders, newHome, scenarioRepo } from "./agents/clients.ts";
import { once } from "./agents/session.ts";
import { cleanupTemp, cli, gitOut } from "./support/repo.ts";

test.after(cleanupTemp);

const read = (repo: string, f: string) => readFileSync(join(repo, f));
const bob = { HANDOFF_AGENT: "bob" };
const replace = (file: string, to: string) => ({ name: "replace", input: { file_path: file, old_string: "line one", new_string: to, instruction: "scripted" } });

/** One session: bob claims a task over MCP, edits a file alice holds exclusively, a free one, a shared one, and runs a shell command. */
const main = once(async () => {
  const repo = scenarioRepo();
  assert.is(cli(["task", "add", "fix the bug", "--id", "bug"], { cwd: repo, agent: "lead" }).code, 0);
  const locked = read(repo, "locked.txt");
  const f = (name: string) => join(repo, name);
  const s = await gemini(repo, [
    { tools: [{ name: "mcp_git-handoff_claim_task", input: { id: "bug" } }] },
    { tools: [replace(f("locked.txt"), "changed")] },
    { tools: [{ name: "write_file", input: { file_path: f("locked.txt"), content: "overwritten\n" } }] },
    { tools: [replace(f("free.txt"), "edited by bob")] },
    { tools: [replace(f("shared.txt"), "edited too")] },
    { tools: [{ name: "run_shell_command", input: { command: "cat locked.txt", description: "show it" } }] },
    { text: "done" },
  ], { env: bob });
  cost("gemini", "one session: start, MCP, deny, free, shared, shell", s.run.ms);
  return { repo, s, locked, results: s.model.toolResults() };
});

test("SessionStart: others' exclusive files reach the model before it acts", async () => {
  const { s } = await main();
  const first = JSON.stringify(s.model.requests.find((r) => r.main)!.body);
  assert.match(first, /git-handoff: you are agent bob/);
  assert.match(first, /- locked\.txt: EXCLUSIVE, do not edit \(alice/);
});

test("exclusive lease: replace and write_file are denied, the file is byte-identical, the reason names the holder", async () => {
  const { repo, locked, results } = await main();
  assert.equal(read(repo, "locked.txt"), locked);
  assert.is(results.length, 6, results.join("\n---\n"));
  for (const r of results.slice(1, 3)) assert.match(r, /Tool execution blocked: git-handoff deny: locked\.txt is inside an exclusive lease on locked\.txt held by alice/);
});

test("MCP: claim_task through Gemini CLI; the holder is the hook's agent", async () => {
  const { repo, results } = await main();
  assert.match(results[0]!, /claimed/);
  assert.is(cli(["task", "show", "bug", "--json"], { cwd: repo }).json.claim.agent, "bob");
  assert.equal(holders(repo, "free.txt"), ["bob"], "the hook leased the edited file to the same agent");
});

test("free file: edited with no objection", async () => {
  const { repo, results } = await main();
  assert.is(read(repo, "free.txt").toString(), "free.txt edited by bob\n");
  assert.not.match(results[3]!, /git-handoff/);
});

test("shared lease: edited, and the warning reaches the model through AfterTool", async () => {
  const { repo, results } = await main();
  assert.is(read(repo, "shared.txt").toString(), "shared.txt edited too\n");
  assert.match(results[4]!, /git-handoff warn: shared\.txt is leased by alice/);
});

test("shell: a command naming a file under another's exclusive lease runs, and the model is warned", async () => {
  const { results } = await main();
  assert.match(results[5]!, /locked\.txt line one/);
  assert.match(results[5]!, /git-handoff warn: this command names locked\.txt, inside an exclusive lease on locked\.txt held by alice/);
});

test("linked worktree: the hook reads the shared leases and denies", async () => {
  const repo = scenarioRepo();
  const wt = `${repo}-wt`;
  gitOut(repo, "worktree", "add", "-q", "-b", "bob-work", wt);
  const before = read(wt, "locked.txt");
  const s = await gemini(wt, [{ tools: [replace(join(wt, "locked.txt"), "changed")] }, { text: "could not edit" }], { env: bob });
  cost("gemini", "linked worktree denied", s.run.ms);
  assert.equal(read(wt, "locked.txt"), before);
  assert.match(s.model.toolResults()[0]!, /git-handoff deny: locked\.txt .* held by alice/);
});

test("start from a subfolder: with init --user the user-scope hook denies the edit and gives the session context", async () => {
  const repo = scenarioRepo();
  const home = newHome();
  const user = { HOME: home, XDG_CONFIG_HOME: join(home, ".config") };
  assert.is(cli(["lease", "sub/deep.txt", "--exclusive"], { cwd: repo, agent: "alice" }).code, 0);
  // Without it: Gemini reads no project settings above its start folder, so nothing checks the edit.
  const bare = await gemini(join(repo, "sub"), [{ tools: [replace(join(repo, "sub/deep.txt"), "unchecked")] }, { text: "edited" }], { env: bob, trusted: [repo] });
  cost("gemini", "subfolder start, no user hook", bare.run.ms);
  assert.is(read(repo, "sub/deep.txt").toString(), "sub/deep.txt unchecked\n", "the gap init --user closes");
  gitOut(repo, "checkout", "--", "sub/deep.txt");
  const init = cli(["init", "--user"], { cwd: repo, env: user });
  assert.is(init.code, 0, init.stderr);
  const before = read(repo, "sub/deep.txt");
  const s = await gemini(join(repo, "sub"), [{ tools: [replace(join(repo, "sub/deep.txt"), "changed")] }, { text: "could not edit" }], { env: bob, home, trusted: [repo] });
  cost("gemini", "subfolder start, user hook denied", s.run.ms);
  assert.equal(read(repo, "sub/deep.txt"), before);
  assert.match(s.model.toolResults()[0]!, /git-handoff deny: sub\/deep\.txt is inside an exclusive lease on sub\/deep\.txt held by alice/);
  assert.match(JSON.stringify(s.model.requests.find((r) => r.main)!.body), /you are agent bob/);
});

test.run();
