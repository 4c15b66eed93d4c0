// Registration of the MCP server: `git handoff mcp-config` and `git handoff init [--write]`
// print the client configuration and merge it into .mcp.json without touching other servers.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("mcp-config shows the .mcp.json entry and the claude / codex commands", () => {
  const repo = tempRepo();
  const r = cli(["mcp-config", "--json"], { cwd: repo });
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.json.mcp_json.mcpServers["git-handoff"], { type: "stdio", command: "git-handoff", args: ["mcp"], env: {} });
  assert.is(r.json.commands.claude, "claude mcp add --scope project git-handoff -- git-handoff mcp");
  assert.is(r.json.commands.codex, "codex mcp add git-handoff -- git-handoff mcp");
  assert.not.ok(existsSync(join(repo, ".mcp.json")), "nothing written without --write");
  const text = cli(["mcp-config"], { cwd: repo });
  assert.match(text.stdout, /claude mcp add/);
  assert.match(text.stdout, /env_vars = \["HANDOFF_AGENT"\]/, "Codex is told to pass the agent name on");
  assert.match(text.stdout, /gemini mcp add/);
  assert.match(text.stdout, /--allowedTools mcp__git-handoff/);
});

test("--write registers the server for Codex (forwarding HANDOFF_AGENT) and Gemini too, keeping what is there", () => {
  const repo = tempRepo();
  mkdirSync(join(repo, ".codex"));
  writeFileSync(join(repo, ".codex/config.toml"), 'model = "o3"\n');
  const w = cli(["mcp-config", "--write", "--json"], { cwd: repo });
  assert.is(w.code, 0, w.stderr);
  assert.equal(w.json.also_written.map((x: any) => x.outcome), ["added", "added"]);
  assert.is(readFileSync(join(repo, ".codex/config.toml"), "utf8"), 'model = "o3"\n\n[mcp_servers.git-handoff]\ncommand = "git-handoff"\nargs = ["mcp"]\nenv_vars = ["HANDOFF_AGENT"]\n');
  assert.equal(JSON.parse(readFileSync(join(repo, ".gemini/settings.json"), "utf8")).mcpServers["git-handoff"], { command: "git-handoff", args: ["mcp"] });
  const again = cli(["mcp-config", "--write", "--json"], { cwd: repo });
  assert.equal(again.json.also_written.map((x: any) => x.outcome), ["present", "present"]);
  writeFileSync(join(repo, ".codex/config.toml"), '[mcp_servers."git-handoff"]\ncommand = "my-wrapper"\n');
  assert.equal(cli(["mcp-config", "--write", "--json"], { cwd: repo }).json.also_written[0].outcome, "kept_existing");
  assert.is(readFileSync(join(repo, ".codex/config.toml"), "utf8"), '[mcp_servers."git-handoff"]\ncommand = "my-wrapper"\n');
});

test("init prints the registration; init --write merges into .mcp.json, keeping other servers", () => {
  const repo = tempRepo();
  const plain = cli(["init"], { cwd: repo });
  assert.is(plain.code, 0, plain.stderr);
  assert.match(plain.stdout, /git handoff mcp/);
  assert.not.ok(existsSync(join(repo, ".mcp.json")));

  const file = join(repo, ".mcp.json");
  const other = { mcpServers: { notes: { command: "notes-server", args: ["--fast"] } }, extra: { keep: true } };
  writeFileSync(file, JSON.stringify(other, null, 4));
  const w = cli(["init", "--write"], { cwd: repo });
  assert.is(w.code, 0, w.stderr);
  assert.match(w.stdout, /added git-handoff/);
  const merged = JSON.parse(readFileSync(file, "utf8"));
  assert.equal(merged.mcpServers.notes, other.mcpServers.notes);
  assert.equal(merged.extra, other.extra);
  assert.equal(merged.mcpServers["git-handoff"].args, ["mcp"]);

  const again = cli(["mcp-config", "--write", "--json"], { cwd: repo });
  assert.is(again.json.written.outcome, "present");

  // an entry the user tailored is theirs
  merged.mcpServers["git-handoff"].env = { HANDOFF_AGENT: "reviewer" };
  writeFileSync(file, JSON.stringify(merged));
  const kept = cli(["mcp-config", "--write", "--json"], { cwd: repo });
  assert.is(kept.json.written.outcome, "kept_existing");
  assert.is(JSON.parse(readFileSync(file, "utf8")).mcpServers["git-handoff"].env.HANDOFF_AGENT, "reviewer");
});

test("a malformed .mcp.json is refused and left as it is; init --json stays one JSON document", () => {
  const repo = tempRepo();
  const file = join(repo, ".mcp.json");
  writeFileSync(file, "{ not json");
  const r = cli(["mcp-config", "--write"], { cwd: repo });
  assert.is(r.code, 2);
  assert.match(r.stderr, /\.mcp\.json is not valid JSON/);
  assert.is(readFileSync(file, "utf8"), "{ not json");
  writeFileSync(file, '{"mcpServers": []}');
  assert.is(cli(["mcp-config", "--write"], { cwd: repo }).code, 2);

  const repo2 = tempRepo();
  const j = cli(["init", "--json", "--write"], { cwd: repo2 });
  assert.is(j.code, 0, j.stderr);
  assert.ok(j.json, "stdout is one JSON document");
  assert.ok(existsSync(join(repo2, ".mcp.json")));
});

test("mcp is in the CLI help, pointing at its own help and the registration", () => {
  const repo = tempRepo();
  const help = cli(["help", "mcp"], { cwd: repo });
  assert.is(help.code, 0);
  assert.match(help.stdout, /MCP server over stdio/);
  assert.match(help.stdout, /mcp-config/);
  assert.match(cli(["--help"], { cwd: repo }).stdout, /mcp-config/);
});

test.run();
