// Registration of the MCP server with agent clients: the `.mcp.json` entry Claude Code reads, the
// `[mcp_servers]` table Codex reads from `.codex/config.toml` (it passes a server no environment
// variable it is not told to, so the table forwards HANDOFF_AGENT: the server then acts as the same
// agent as the hooks), and the `mcpServers` entry of `.gemini/settings.json` (Gemini CLI passes its
// environment on). Kept apart from init.ts, which only hooks
// it in: `git handoff init` shows it (and with --write merges it), `git handoff mcp-config` too.
import { mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Command } from "commander";
import { fail } from "../../core/errors.ts";
import { withGlobals, withStore } from "../context.ts";
import { emit } from "../../present/output.ts";
import { replaceFile } from "../../store/small-file.ts";

export const SERVER_NAME = "git-handoff";
export const MCP_JSON = ".mcp.json";

/** The server entry; no agent name in it: each worktree derives its own (or set HANDOFF_AGENT in env). */
export const SERVER_ENTRY = { type: "stdio", command: "git-handoff", args: ["mcp"], env: {} as Record<string, string> };

export const ADD_COMMANDS = {
  claude: `claude mcp add --scope project ${SERVER_NAME} -- git-handoff mcp`,
  // `codex mcp add` cannot forward a variable (only --env K=V fixes one): the table below does.
  codex: `codex mcp add ${SERVER_NAME} -- git-handoff mcp`,
  gemini: `gemini mcp add --scope project ${SERVER_NAME} git-handoff mcp`,
};

export const CODEX_CONFIG = ".codex/config.toml";
/** Codex's table for our server; `env_vars` forwards the agent name the hooks act as. */
export const CODEX_TABLE = [`[mcp_servers.${SERVER_NAME}]`, 'command = "git-handoff"', 'args = ["mcp"]', 'env_vars = ["HANDOFF_AGENT"]'].join("\n") + "\n";
export const GEMINI_SETTINGS = ".gemini/settings.json";
export const GEMINI_ENTRY = { command: "git-handoff", args: ["mcp"] };

export type MergeOutcome = "added" | "present" | "kept_existing";

/**
 * Adds our server to the text of a `.mcp.json` (null: no file yet), keeping every other server
 * and key as it was. An existing `git-handoff` entry is the user's and is never overwritten.
 */
export function mergeMcpJson(text: string | null, file = MCP_JSON): { text: string; outcome: MergeOutcome } {
  let doc: Record<string, unknown> = {};
  if (text !== null && text.trim() !== "") {
    try {
      doc = JSON.parse(text) as Record<string, unknown>;
    } catch (e) {
      fail("invalid_input", `${file} is not valid JSON (${(e as Error).message}); fix it or move it away, then run this again`);
    }
    if (doc === null || typeof doc !== "object" || Array.isArray(doc)) fail("invalid_input", `${file} must hold a JSON object`);
  }
  const servers = doc.mcpServers ?? {};
  if (servers === null || typeof servers !== "object" || Array.isArray(servers)) fail("invalid_input", `${file}: mcpServers must be an object`);
  const existing = (servers as Record<string, unknown>)[SERVER_NAME];
  if (existing !== undefined) {
    const same = JSON.stringify(existing) === JSON.stringify(SERVER_ENTRY);
    return { text: text!, outcome: same ? "present" : "kept_existing" };
  }
  const merged = { ...doc, mcpServers: { ...(servers as Record<string, unknown>), [SERVER_NAME]: SERVER_ENTRY } };
  return { text: JSON.stringify(merged, null, 2) + "\n", outcome: "added" };
}

/** Merges our entry into `<worktree>/.mcp.json`, atomically (temp file + rename). */
export function writeMcpJson(workTree: string): { path: string; outcome: MergeOutcome } {
  const path = join(workTree, MCP_JSON);
  let text: string | null = null;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const merged = mergeMcpJson(text, path);
  if (merged.outcome === "added") {
    replaceFile(path, merged.text);
  }
  return { path, outcome: merged.outcome };
}

/** Adds our table to `.codex/config.toml` unless a table of that name is there (then it is the user's). */
export function writeCodexConfig(workTree: string): { path: string; outcome: MergeOutcome } {
  const path = join(workTree, CODEX_CONFIG);
  let text = "";
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const header = new RegExp(`^\\s*\\[mcp_servers\\.(?:${SERVER_NAME}|"${SERVER_NAME}")\\]`, "m");
  if (header.test(text)) return { path, outcome: text.includes(CODEX_TABLE) ? "present" : "kept_existing" };
  mkdirSync(dirname(path), { recursive: true });
  replaceFile(path, text ? `${text.replace(/\n*$/, "\n")}\n${CODEX_TABLE}` : CODEX_TABLE);
  return { path, outcome: "added" };
}

/** Merges our server into `.gemini/settings.json` (`mcpServers`), keeping everything else. */
export function writeGeminiSettings(workTree: string): { path: string; outcome: MergeOutcome } {
  const path = join(workTree, GEMINI_SETTINGS);
  let text: string | null = null;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  let doc: Record<string, any> = {};
  if (text !== null && text.trim() !== "") {
    try {
      doc = JSON.parse(text);
    } catch (e) {
      fail("invalid_input", `${path} is not valid JSON (${(e as Error).message}); fix it or move it away, then run this again`);
    }
    if (doc === null || typeof doc !== "object" || Array.isArray(doc)) fail("invalid_input", `${path} must hold a JSON object`);
  }
  const servers = doc.mcpServers ?? {};
  if (servers === null || typeof servers !== "object" || Array.isArray(servers)) fail("invalid_input", `${path}: mcpServers must be an object`);
  if (servers[SERVER_NAME] !== undefined) return { path, outcome: JSON.stringify(servers[SERVER_NAME]) === JSON.stringify(GEMINI_ENTRY) ? "present" : "kept_existing" };
  mkdirSync(dirname(path), { recursive: true });
  replaceFile(path, JSON.stringify({ ...doc, mcpServers: { ...servers, [SERVER_NAME]: GEMINI_ENTRY } }, null, 2) + "\n");
  return { path, outcome: "added" };
}

export interface McpRegistration {
  server: string;
  mcp_json: { mcpServers: Record<string, typeof SERVER_ENTRY> };
  codex_toml: string;
  gemini_settings: { mcpServers: Record<string, typeof GEMINI_ENTRY> };
  commands: typeof ADD_COMMANDS;
  written?: { path: string; outcome: MergeOutcome };
  /** The Codex and Gemini project files, written with `.mcp.json`. */
  also_written?: Array<{ path: string; outcome: MergeOutcome }>;
}

export function mcpRegistration(workTree: string | null, write: boolean): McpRegistration {
  const reg: McpRegistration = {
    server: SERVER_NAME,
    mcp_json: { mcpServers: { [SERVER_NAME]: SERVER_ENTRY } },
    codex_toml: CODEX_TABLE,
    gemini_settings: { mcpServers: { [SERVER_NAME]: GEMINI_ENTRY } },
    commands: ADD_COMMANDS,
  };
  if (write) {
    if (!workTree) fail("usage", `a bare repository has no worktree to hold ${MCP_JSON}`);
    reg.written = writeMcpJson(workTree);
    reg.also_written = [writeCodexConfig(workTree), writeGeminiSettings(workTree)];
  }
  return reg;
}

const outcomeText = (w: { path: string; outcome: MergeOutcome }, server: string) =>
  w.outcome === "added" ? `added ${server} to ${w.path}` : w.outcome === "present" ? `${w.path} already has ${server}` : `${w.path} already has a ${server} entry of its own: left as it is`;

export function registrationText(reg: McpRegistration): string {
  const w = reg.written;
  const wrote = !w
    ? [`add them to ${MCP_JSON}, ${CODEX_CONFIG} and ${GEMINI_SETTINGS} with --write (merged: other servers are kept)`]
    : [w, ...(reg.also_written ?? [])].map((x) => outcomeText(x, reg.server));
  return [
    "MCP server (agents call git-handoff as tools): git handoff mcp",
    `  Claude Code, ${MCP_JSON} at the repository root:`,
    ...JSON.stringify(reg.mcp_json, null, 2).split("\n").map((l) => `    ${l}`),
    `  or: ${reg.commands.claude}`,
    `  headless claude -p calls the tools once the folder is trusted (init allows mcp__${SERVER_NAME} in .claude/settings.json), or with --allowedTools mcp__${SERVER_NAME}`,
    `  Codex, ${CODEX_CONFIG} (read in a trusted project) or ~/.codex/config.toml; env_vars keeps the hooks' agent name:`,
    ...reg.codex_toml.trimEnd().split("\n").map((l) => `    ${l}`),
    `  Gemini CLI, mcpServers in ${GEMINI_SETTINGS}, or: ${reg.commands.gemini}`,
    ...wrote.map((l) => `  ${l}`),
  ].join("\n");
}

/** `git handoff mcp-config [--write]`: the registration on its own. */
export function registerMcpConfig(program: Command): void {
  withGlobals(
    program
      .command("mcp-config")
      .description(`show how to register the MCP server with Claude Code, Codex and Gemini CLI; --write merges it into ${MCP_JSON}, ${CODEX_CONFIG} and ${GEMINI_SETTINGS}`)
      .option("--write", `add the server to ${MCP_JSON}, ${CODEX_CONFIG} and ${GEMINI_SETTINGS} (other servers and an existing entry are kept)`),
    { agent: false },
  ).action(async (o: { write?: boolean }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const reg = mcpRegistration(store.repo.workTree, !!o.write);
      emit(!!g.json, reg, () => registrationText(reg));
    });
  });
}

/**
 * `git handoff mcp` is served by its own bundle (dist/mcp-main.cjs, picked by the dispatcher,
 * which reads the options described here); this entry is its help (`mcp --help` too: the
 * dispatcher sends it here). Its action runs only when that bundle is missing.
 */
export function registerMcpCommand(program: Command): void {
  withGlobals(
    program
      .command("mcp")
      .description("run the MCP server over stdio for one agent (Claude Code, Codex, Gemini CLI, any MCP client); stdout carries only the protocol, logs go to stderr; register it with: git handoff mcp-config [--write]")
      .option("--agent <name>", "the agent name for every claim (default: $HANDOFF_AGENT, else load_context's agent argument, else user@host[.worktree])")
      .option("--wait-max <duration>", "longest wait_task / watch block before it returns (default 50s)")
      .allowUnknownOption(),
    { agent: false, values: { "--agent": "agent" } },
  ).action(() => {
    fail("internal", "the MCP server bundle dist/mcp-main.cjs is missing: run npm run build");
  });
}

/**
 * Hooks the registration into `git handoff init`: adds `--write` (unless another part of init
 * already defined it) and, after init ran, prints the registration or merges it into .mcp.json.
 * With --json init's own JSON stays the only output; `mcp-config --json` has this part.
 */
export function withMcpRegistration(init: Command): Command {
  if (!init.options.some((o) => o.long === "--write")) init.option("--write", `also write the MCP server's registration (${MCP_JSON}, ${CODEX_CONFIG}, ${GEMINI_SETTINGS})`);
  init.hook("postAction", async (_self, action) => {
    const opts = action.optsWithGlobals() as { write?: boolean; json?: boolean; C?: string };
    if ((opts as { user?: boolean }).user) return; // user scope: no repository, no registration
    await withStore(action, async (store) => {
      const reg = mcpRegistration(store.repo.workTree, !!opts.write);
      if (!opts.json) process.stdout.write(`\n${registrationText(reg)}\n`);
    });
  });
  return init;
}
