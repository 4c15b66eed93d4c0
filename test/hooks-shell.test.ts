// Shell-tool payloads and the hooks added for Codex and Gemini, through the real built hook: an
// apply_patch run through a shell is denied like apply_patch; any other command naming a file
// under another agent's exclusive lease is warned about, never denied; Gemini hears warnings
// after the tool ran; Codex and Gemini get the SessionStart context.
import { writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { patchPaths } from "../src/hooks/apply-patch.ts";
import { shellPatch, shellWords } from "../src/hooks/shell-command.ts";
import { cleanupTemp, handoffRefs, tempRepo } from "./support/repo.ts";
import { runHook } from "./support/hook-runner.ts";
import { storeLease } from "./support/seed.ts";

test.after(cleanupTemp);

async function leasedRepo(): Promise<string> {
  const repo = tempRepo();
  await storeLease({ cwd: repo, agent: "alice" }, ["src/api/**"], { exclusive: true });
  await storeLease({ cwd: repo, agent: "alice" }, ["src/shared.ts"]);
  return repo;
}
const hook = (name: string, repo: string, payload: object) => runHook(name, { cwd: repo, agent: "bob", input: JSON.stringify({ cwd: repo, ...payload }) });
const patch = "*** Begin Patch\n*** Update File: src/api/users.ts\n@@\n-a\n+b\n*** End Patch\n";

test("apply_patch run through a shell: heredoc, quoted argument, applypatch, inside bash -lc", () => {
  for (const cmd of [`apply_patch <<'EOF'\n${patch}EOF`, `applypatch '${patch}'`, `cd sub && apply_patch "${patch}"`, `bash -lc 'apply_patch <<EOF\n${patch}EOF'`]) {
    assert.equal(patchPaths(shellPatch(cmd) ?? ""), ["src/api/users.ts"], cmd);
  }
  assert.is(shellPatch(`grep -r "apply_patch" src/`), null, "a command that only names apply_patch runs none");
  assert.is(shellPatch("echo '*** Begin Patch'"), null);
  assert.equal(shellWords("cat src/api/users.ts | grep -n x > out.txt 2>&1; ls -la $HOME https://x.io/a.ts"), ["src/api/users.ts", "out.txt"]);
  // Quoting as the shell reads it: a quoted part is one word, spaces and all; quotes dropped.
  assert.equal(shellWords(`echo x > "dir with space/f.ts"; cat 'a b.txt' "src/x.ts" a\\ b/c.ts 'x'"y".md`), ["dir with space/f.ts", "a b.txt", "src/x.ts", "a b/c.ts", "xy.md"]);
  assert.equal(shellWords(`git commit -m "it's done; see notes" && touch a.ts`), ["a.ts"], "a message is one word, its ; and spaces inside");
});

test("a quoted path with spaces under an exclusive lease is warned about, by the fast path and the full hook alike", async () => {
  const repo = tempRepo();
  await storeLease({ cwd: repo, agent: "alice" }, ["dir with space/**"], { exclusive: true });
  for (const command of [`echo x > "dir with space/f.ts"`, `cp a.ts 'dir with space/g.ts'`, `echo x > dir\\ with\\ space/h.ts`]) {
    const r = hook("claude-pre-tool-use", repo, { tool_name: "Bash", tool_input: { command } });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.json?.hookSpecificOutput?.additionalContext ?? "", /this command names dir with space\/[fgh]\.ts, inside an exclusive lease on dir with space\/\*\* held by alice/, `${command}: ${r.stdout}`);
  }
});

test("Codex Bash running apply_patch inside an exclusive lease is denied; Claude and Gemini shells are only warned", async () => {
  const repo = await leasedRepo();
  const refs = handoffRefs(repo);
  const codex = hook("codex-pre-tool-use", repo, { hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: `apply_patch <<'EOF'\n${patch}EOF` } });
  assert.is(codex.code, 0, codex.stderr);
  assert.is(codex.json.hookSpecificOutput.permissionDecision, "deny");
  assert.match(codex.json.hookSpecificOutput.permissionDecisionReason, /src\/api\/users\.ts is inside an exclusive lease on src\/api\/\*\* held by alice/);

  const sed = hook("claude-pre-tool-use", repo, { tool_name: "Bash", tool_input: { command: "sed -i s/a/b/ src/api/users.ts" } });
  assert.is(sed.json.hookSpecificOutput.permissionDecision, undefined, "a word scan never denies");
  assert.match(sed.json.hookSpecificOutput.additionalContext, /^git-handoff warn: this command names src\/api\/users\.ts, inside an exclusive lease on src\/api\/\*\* held by alice/);
  const gem = hook("gemini-before-tool", repo, { tool_name: "run_shell_command", tool_input: { command: "rm src/api/old.ts" } });
  assert.not.ok(gem.json.decision);
  assert.match(gem.json.systemMessage, /this command names src\/api\/old\.ts/);
  // Shared leases and free files are not a shell command's business; no word, no store opened.
  assert.is(hook("claude-pre-tool-use", repo, { tool_name: "Bash", tool_input: { command: "cat src/shared.ts src/free.ts" } }).stdout, "");
  assert.is(hook("codex-pre-tool-use", repo, { tool_name: "Bash", tool_input: { command: "ls" } }).stdout, "");
  assert.is(handoffRefs(repo), refs, "a shell check leases nothing");
  const bad = hook("codex-pre-tool-use", repo, { tool_name: "Bash", tool_input: {} });
  assert.match(bad.stderr, /Bash payload has no command/);
});

test("a shell check that fails never blocks, even in strict mode (an edit check then does)", async () => {
  const repo = await leasedRepo();
  writeFileSync(`${repo}/.handoff.yaml`, "mode: strict\nmax_attempts: 0\n"); // a value the policy refuses: the file does not load
  const sh = hook("claude-pre-tool-use", repo, { tool_name: "Bash", tool_input: { command: "cat src/api/users.ts" } });
  assert.is(sh.code, 0, sh.stderr);
  assert.is(sh.stdout, "");
  assert.match(sh.stderr, /shell command not checked/);
  const edit = hook("claude-pre-tool-use", repo, { tool_name: "Edit", tool_input: { file_path: `${repo}/src/free.ts` } });
  assert.is(edit.json.hookSpecificOutput.permissionDecision, "deny", "strict fails closed for edits");
});

test("Gemini AfterTool tells the model what BeforeTool could only show the user", async () => {
  const repo = await leasedRepo();
  const r = hook("gemini-after-tool", repo, { hook_event_name: "AfterTool", tool_name: "replace", tool_input: { file_path: `${repo}/src/shared.ts` }, tool_response: {} });
  assert.is(r.code, 0, r.stderr);
  assert.equal(Object.keys(r.json), ["hookSpecificOutput"]);
  assert.is(r.json.hookSpecificOutput.hookEventName, "AfterTool");
  assert.match(r.json.hookSpecificOutput.additionalContext, /^git-handoff warn: src\/shared\.ts is leased by alice/);
  assert.is(hook("gemini-after-tool", repo, { tool_name: "write_file", tool_input: { file_path: `${repo}/src/free.ts` } }).stdout, "");
  assert.is(hook("gemini-after-tool", repo, { tool_name: "read_file", tool_input: { file_path: `${repo}/src/shared.ts` } }).stdout, "");
});

test("SessionStart for Codex and Gemini: the same context as Claude's", async () => {
  const repo = await leasedRepo();
  for (const name of ["codex-session-start", "gemini-session-start"]) {
    const r = hook(name, repo, { hook_event_name: "SessionStart", source: "startup", session_id: "s1" });
    assert.is(r.code, 0, r.stderr);
    assert.is(r.json.hookSpecificOutput.hookEventName, "SessionStart");
    assert.match(r.json.hookSpecificOutput.additionalContext, /you are agent bob[\s\S]*src\/api\/\*\*: EXCLUSIVE, do not edit \(alice/);
  }
});

test.run();
