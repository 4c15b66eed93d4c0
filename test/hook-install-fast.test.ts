// `init` installs the pre-edit hooks as `git-handoff-hook <name>` (the sh fast path) and rewrites
// the `git-handoff hook <name>` entries an earlier init wrote, without adding a second one;
// `uninstall` removes both forms.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const commands = (file: string) => JSON.stringify(JSON.parse(readFileSync(file, "utf8"))).match(/git-handoff[- ]hook [a-z-]+/g) ?? [];

test("init upgrades earlier entries to the fast path in place; uninstall removes them", () => {
  const repo = tempRepo();
  mkdirSync(join(repo, ".claude"));
  mkdirSync(join(repo, ".cursor"));
  const old = { hooks: { PreToolUse: [{ matcher: "Edit|Write|MultiEdit|NotebookEdit|Bash", hooks: [{ type: "command", command: "git-handoff hook claude-pre-tool-use", timeout: 10 }] }] } };
  writeFileSync(join(repo, ".claude/settings.json"), JSON.stringify(old));
  writeFileSync(join(repo, ".cursor/hooks.json"), JSON.stringify({ version: 1, hooks: { preToolUse: [{ command: "git-handoff hook cursor-pre-tool-use" }] } }));
  const r = cli(["init", "--json"], { cwd: repo });
  assert.is(r.code, 0, r.stderr);
  assert.equal(commands(join(repo, ".claude/settings.json")), ["git-handoff-hook claude-pre-tool-use", "git-handoff hook claude-session-start"]);
  assert.equal(commands(join(repo, ".cursor/hooks.json")), ["git-handoff-hook cursor-pre-tool-use"]);
  assert.equal(commands(join(repo, ".codex/hooks.json")), ["git-handoff-hook codex-pre-tool-use", "git-handoff hook codex-session-start"]);
  assert.equal(commands(join(repo, ".gemini/settings.json")), ["git-handoff-hook gemini-before-tool", "git-handoff-hook gemini-after-tool", "git-handoff hook gemini-session-start"]);
  assert.match(readFileSync(join(repo, ".git/hooks/pre-commit"), "utf8"), /exec git-handoff-hook pre-commit/);
  const again = cli(["init", "--json"], { cwd: repo });
  assert.equal(again.json.actions.filter((a: { op: string }) => a.op !== "note" && a.op !== "ok"), [], "a second init changes nothing");
  assert.is(cli(["uninstall"], { cwd: repo }).code, 0);
  assert.not.ok(existsSync(join(repo, ".codex/hooks.json")));
  assert.not.ok(existsSync(join(repo, ".cursor/hooks.json")), "it held only our hook");
});

test.run();
