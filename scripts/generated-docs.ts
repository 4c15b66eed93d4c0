// What `npm run docs` generates, as file -> text: the CLI reference and man page from the
// commander definitions, the MCP tool reference from what the server lists over MCP (`mcpTools`,
// which test/docs-mcp.test.ts also reads).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { readFileSync } from "node:fs";
import { buildProgram } from "../src/cli/program.ts";
import { cliMarkdown, manPage } from "../src/cli/reference.ts";
import { EXIT_CODES } from "../src/core/errors.ts";
import { createServer } from "../src/mcp/server.ts";
import { McpSession } from "../src/mcp/session.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

export async function mcpTools(): Promise<{ name: string; title?: string; description?: string; inputSchema: { properties?: Record<string, { description?: string; type?: string }>; required?: string[] } }[]> {
  // The server needs a repository to open; the tool list does not depend on its state.
  const repo = mkdtempSync(join(tmpdir(), "handoff-docs-"));
  spawnSync("git", ["init", "-q", repo]);
  const session = await McpSession.open({ cwd: repo, env: { ...process.env, HANDOFF_AGENT: "docs" }, agent: "docs" });
  const server = createServer(session, { log: () => {} });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const client = new Client({ name: "docs", version: "0" });
  await client.connect(a);
  try {
    return (await client.listTools()).tools as never;
  } finally {
    await client.close();
    await server.close();
    session.close();
    rmSync(repo, { recursive: true, force: true });
  }
}

function mcpMarkdown(tools: Awaited<ReturnType<typeof mcpTools>>): string {
  const lines = ["# MCP tool reference", "", "Generated from the server's own tool list (what `tools/list` returns) by `npm run docs`; do not", "edit by hand.", ""];
  for (const t of tools) lines.push(`- [\`${t.name}\`](#${t.name.replace(/_/g, "_")}): ${t.title ?? ""}`);
  lines.push("");
  for (const t of tools) {
    lines.push(`## ${t.name}`, "", t.description ?? "", "");
    const props = Object.entries(t.inputSchema.properties ?? {});
    if (props.length) {
      lines.push("| argument | required | meaning |", "| --- | --- | --- |");
      for (const [name, p] of props) lines.push(`| \`${name}\` | ${t.inputSchema.required?.includes(name) ? "yes" : ""} | ${(p.description ?? "").replace(/\|/g, "\\|").replace(/\n/g, " ")} |`);
      lines.push("");
    }
  }
  return lines.join("\n");
}

/** Every error code with its exit status and the comment that explains it in src/core/errors.ts. */
function exitCodes(): string {
  const src = readFileSync(join(import.meta.dirname, "../src/core/errors.ts"), "utf8");
  const rows = [...src.matchAll(/^\s*\| "([a-z_]+)";?(?: \/\/ (.*))?$/gm)].map((m) => ({ code: m[1]!, why: m[2] ?? "" }));
  const lines = ["## Exit codes", "", "Every refusal has a stable `code` (at the end of its error line, `git-handoff: ... [held_by_other]`; in `--json`: `error.code`) and an exit status:", "", "| code | exit | meaning |", "| --- | --- | --- |"];
  for (const r of rows) lines.push(`| \`${r.code}\` | ${EXIT_CODES[r.code as keyof typeof EXIT_CODES]} | ${r.why.replace(/\|/g, "\\|")} |`);
  return lines.join("\n") + "\n";
}

export async function generatedDocs(): Promise<Record<string, string>> {
  const program = buildProgram();
  return {
    "docs/cli.md": `${cliMarkdown(program)}\n${exitCodes()}`,
    "man/git-handoff.1": manPage(program, (JSON.parse(readFileSync(join(import.meta.dirname, "../package.json"), "utf8")) as { version: string }).version),
    "docs/mcp-tools.md": mcpMarkdown(await mcpTools()),
  };
}
