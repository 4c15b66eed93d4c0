// Codex CLI itself (the pinned npm release), driven by a scripted model on 127.0.0.1, runs the
// hooks and the MCP server that `git handoff init --write` installs. Each test asserts what is on
// disk and what reached the model.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { assertSessionStartContext, codex, codexEnv, cost, holders, patchOf, scenarioRepo } from "./agents/clients.ts";
import { once } from "./agents/session.ts";
import { cleanupTemp, cli, gitOut } from "./support/repo.ts";

test.after(cleanupTemp);

const read = (repo: string, f: string) => readFileSync(join(repo, f));
const bob = { HANDOFF_AGENT: "bob" };
const lockedPatch = patchOf("locked.txt", "locked.txt line one", "changed");

/** One session: bob holds a task; patches a file alice holds exclusively (directly and through the shell), a free one, a shared one, and runs a shell command naming the locked file. */
const main = once(async () => {
  const repo = scenarioRepo();
  assert.is(cli(["task", "add", "write the docs", "--id", "docs"], { cwd: repo, agent: "lead" }).code, 0);
  assert.is(cli(["claim", "docs"], { cwd: repo, agent: "bob" }).code, 0);
  const locked = read(repo, "locked.txt");
  const s = await codex(repo, [
    { tools: [{ name: "apply_patch", input: lockedPatch }] },
    { tools: [{ name: "exec_command", input: { cmd: `apply_patch <<'EOF'\n${lockedPatch}EOF\n` } }] },
    { tools: [{ name: "apply_patch", input: patchOf("free.txt", "free.txt line one", "edited by bob") }] },
    { tools: [{ name: "apply_patch", input: patchOf("shared.txt", "shared.txt line one", "edited too") }] },
    { tools: [{ name: "exec_command", input: { cmd: "cat locked.txt" } }] },
    { text: "done" },
  ], { env: bob });
  cost("codex", "one session: start, deny, shell patch, free, shared, shell", s.run.ms);
  return { repo, s, locked, results: s.model.toolResults() };
});

test("SessionStart: the agent's claims and others' exclusive files reach the model before it acts", async () => {
  assertSessionStartContext((await main()).s);
});

test("exclusive lease: apply_patch is denied, the file is byte-identical, the reason names the holder", async () => {
  const { repo, locked, results } = await main();
  assert.equal(read(repo, "locked.txt"), locked);
  assert.is(results.length, 5, results.join("\n---\n"));
  assert.match(results[0]!, /blocked by PreToolUse hook: git-handoff deny: locked\.txt is inside an exclusive lease on locked\.txt held by alice/);
});

test("apply_patch through the shell tool (heredoc) is denied like apply_patch", async () => {
  const { results } = await main();
  assert.match(results[1]!, /blocked by PreToolUse hook: git-handoff deny: locked\.txt .* held by alice/);
});

test("free file: edited with no objection, and leased to the hook's agent", async () => {
  const { repo, results, s } = await main();
  assert.is(read(repo, "free.txt").toString(), "edited by bob\n");
  assert.match(results[2]!, /Success\. Updated the following files:\nM free\.txt/);
  assert.equal(holders(repo, "free.txt"), ["bob"]);
  assert.not.match(s.model.seen(), /git-handoff warn: [^"]*free\.txt/);
});

test("shared lease: edited, and the warning naming the holder reaches the model", async () => {
  const { repo, s } = await main();
  assert.is(read(repo, "shared.txt").toString(), "edited too\n");
  assert.match(s.model.seen(), /git-handoff warn: shared\.txt is leased by alice/);
});

test("shell: a command naming a file under another's exclusive lease runs, and the model is warned", async () => {
  const { results, s } = await main();
  assert.match(results[4]!, /locked\.txt line one/, "a word scan never denies");
  assert.match(s.model.seen(), /git-handoff warn: this command names locked\.txt, inside an exclusive lease on locked\.txt held by alice/);
});

test("MCP: claim_task through Codex from the .codex/config.toml init wrote; the holder is the hook's agent", async () => {
  const repo = scenarioRepo();
  assert.is(cli(["task", "add", "fix the bug", "--id", "bug"], { cwd: repo, agent: "lead" }).code, 0);
  // A slug Codex has no metadata for lists MCP tools directly (a known one defers them to tool_search).
  const s = await codex(repo, [{ tools: [{ name: "mcp__git_handoff/claim_task", input: { id: "bug" } }], needs: "mcp__git_handoff" }, { text: "claimed" }], { env: bob, model: "scripted-model" });
  cost("codex", "MCP claim_task", s.run.ms);
  assert.match(s.model.toolResults()[0]!, /"status":"claimed"/, s.model.toolResults()[0]);
  assert.is(cli(["task", "show", "bug", "--json"], { cwd: repo }).json.claim.agent, "bob");
});

test("linked worktree and a start from a subfolder: denied (Codex finds the repository root itself)", async () => {
  const repo = scenarioRepo();
  const wt = `${repo}-wt`;
  gitOut(repo, "worktree", "add", "-q", "-b", "bob-work", wt);
  const before = read(wt, "locked.txt");
  const s = await codex(join(wt, "sub"), [{ tools: [{ name: "apply_patch", input: patchOf("../locked.txt", "locked.txt line one", "changed") }] }, { text: "could not edit" }], { env: bob, project: wt });
  cost("codex", "linked worktree, subfolder denied", s.run.ms);
  assert.equal(read(wt, "locked.txt"), before);
  assert.match(s.model.toolResults()[0]!, /git-handoff deny: locked\.txt .* held by alice/);
});

test("an unapproved hook: Codex skips it without a word, so the leased file is edited (init and doctor say so)", async () => {
  const repo = scenarioRepo();
  const s = await codex(repo, [{ tools: [{ name: "apply_patch", input: lockedPatch }] }, { text: "edited" }], { env: bob, trustHooks: false });
  cost("codex", "untrusted hook skipped", s.run.ms);
  assert.is(read(repo, "locked.txt").toString(), "changed\n");
  assert.not.match(s.model.seen() + s.run.stdout + s.run.stderr, /git-handoff (deny|warn)|you are agent bob|hook/i);
  const init = cli(["init", "--dry-run"], { cwd: repo });
  assert.match(init.stdout, /Codex runs these hooks only in a trusted project and once each is approved/);
});

test("hooks approved as Codex's /hooks screen does: they run without the bypass flag, and doctor says ok", async () => {
  const repo = scenarioRepo();
  const before = read(repo, "locked.txt");
  const s = await codex(repo, [{ tools: [{ name: "apply_patch", input: lockedPatch }] }, { text: "could not edit" }], { env: bob, trustHooks: "approved" });
  cost("codex", "approved hook denied", s.run.ms);
  assert.equal(read(repo, "locked.txt"), before);
  assert.match(s.model.toolResults()[0]!, /git-handoff deny: locked\.txt .* held by alice/);
  assert.not.match(s.run.stdout, /dangerously-bypass-hook-trust/);
  const doctor = cli(["doctor", "--json"], { cwd: repo, env: codexEnv(s.home) });
  assert.is(doctor.code, 0, doctor.stderr);
  assert.equal(doctor.json.checks.find((c: any) => c.name === "codex hooks"), { name: "codex hooks", status: "ok", detail: "Codex runs the 2 git-handoff hook(s): project trusted, hooks approved" });
});

test.run();
