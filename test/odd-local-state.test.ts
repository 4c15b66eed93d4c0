// Local states no writer of ours makes, met with a clear one-line refusal instead of a bug report
// or a retry loop: a file under .git/refs/ where git needs a folder (it read as a lock another
// writer held, so a write was retried until it gave up saying "try again"), and a current folder
// removed under the shell that runs the command (Node's bare `ENOENT ... uv_cwd`, exit 1), and a
// file where .git/handoff, the folder of caches and locks, must be (`ENOTDIR`, exit 1).
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { overStdio } from "./support/mcp.ts";
import { CLI, cleanEnv, cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("a file where refs/handoff/tasks/ must be a folder: corrupt_state at once, exit 2, nothing written", () => {
  const repo = tempRepo();
  mkdirSync(`${repo}/.git/refs/handoff`, { recursive: true });
  writeFileSync(`${repo}/.git/refs/handoff/tasks`, "junk\n");
  const start = Date.now();
  const r = cli(["task", "add", "x", "--id", "t1", "--json"], { cwd: repo, agent: "lead" });
  assert.is(r.code, 2, r.stdout + r.stderr);
  assert.is(r.json.error.code, "corrupt_state");
  assert.match(r.json.error.message, /non-directory in the way/);
  assert.match(r.json.error.message, /nothing a retry changes/);
  assert.not.match(r.stdout + r.stderr, /try again|unexpected error/);
  assert.ok(Date.now() - start < 5_000, "no retries until a deadline");
  assert.is(readFileSync(`${repo}/.git/refs/handoff/tasks`, "utf8"), "junk\n");
});

test(".git/handoff as a file: reads answer, a claim is refused as corrupt_state naming it (exit 2), in the CLI and MCP", async () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "x", "--id", "t1"], { cwd: repo, agent: "lead" }).code, 0);
  rmSync(`${repo}/.git/handoff`, { recursive: true, force: true });
  writeFileSync(`${repo}/.git/handoff`, "not a folder\n");
  const read = cli(["task", "show", "t1", "--json"], { cwd: repo, agent: "alice" });
  assert.is(read.code, 0, read.stderr);
  assert.is(read.json.status, "todo");
  const text = cli(["claim", "t1"], { cwd: repo, agent: "alice" });
  assert.is(text.code, 2, text.stderr);
  assert.match(text.stderr, /\.git\/handoff is a file, not a folder/);
  assert.match(text.stderr, /remove or move .*\.git\/handoff away/);
  assert.not.match(text.stderr, /unexpected error|ENOTDIR/);
  const json = cli(["claim", "t1", "--json"], { cwd: repo, agent: "alice" });
  assert.is(json.code, 2);
  assert.is(json.json.error.code, "corrupt_state");
  assert.is(json.json.error.data.path, `${repo}/.git/handoff`);
  const mcp = await overStdio(repo, { agent: "alice" });
  try {
    const refused = await mcp.refused("claim_task", { id: "t1" });
    assert.is(refused.code, "corrupt_state");
    assert.not.match(mcp.stderr(), /ENOTDIR|\n\s+at /, "no stack trace on the server's stderr");
  } finally {
    await mcp.close();
  }
  assert.is(JSON.parse(gitOut(repo, "show", "refs/handoff/tasks/t1:task.json")).status, "todo", "nothing claimed");
  assert.is(readFileSync(`${repo}/.git/handoff`, "utf8"), "not a folder\n", "the file is left to its owner");
});

/** Runs the CLI from a folder removed after the shell entered it. */
function fromRemovedFolder(args: string[], input = ""): { code: number; stderr: string } {
  const dir = `${tempDir("handoff-gone-")}/here`;
  mkdirSync(dir);
  const quoted = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const r = spawnSync("sh", ["-c", `cd '${dir}' && rmdir '${dir}' && exec ${quoted}`], { env: cleanEnv({ HANDOFF_AGENT: "alice" }), input, encoding: "utf8" });
  return { code: r.status ?? -1, stderr: r.stderr };
}

test("a current folder that was removed: not_a_repo saying so, from the CLI, the MCP server and an agent hook", () => {
  const status = fromRemovedFolder(["status"]);
  assert.is(status.code, 2, status.stderr);
  assert.match(status.stderr, /the current folder no longer exists/);
  assert.not.match(status.stderr, /unexpected error|uv_cwd/);
  const mcp = fromRemovedFolder(["mcp"]);
  assert.is(mcp.code, 2, mcp.stderr);
  assert.match(mcp.stderr, /the current folder no longer exists/);
  // An agent's hook outside any repository stays out of its way: not checked, said on stderr.
  const hook = fromRemovedFolder(["hook", "claude-pre-tool-use"], JSON.stringify({ tool_name: "Edit", tool_input: { file_path: "/nowhere/a.ts" } }));
  assert.is(hook.code, 0, hook.stderr);
  assert.match(hook.stderr, /not checked \(the current folder no longer exists/);
  // -C relative to the folder that is gone: the same refusal, not Node's uv_cwd.
  for (const args of [["-C", "sub", "status"], ["mcp", "-C", "sub"]]) {
    const r = fromRemovedFolder(args);
    assert.is(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /the current folder no longer exists/);
    assert.not.match(r.stderr, /unexpected error|uv_cwd/);
  }
  // -C with an absolute path needs no current folder.
  const repo = tempRepo();
  const given = fromRemovedFolder(["-C", repo, "task", "list"]);
  assert.is(given.code, 0, given.stderr);
});

test.run();
