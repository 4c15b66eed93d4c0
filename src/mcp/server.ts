import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { buildSemver, THIS_BUILD } from "../core/build-identity.ts";
import { HandoffError, type ErrorCode } from "../core/errors.ts";
import { DirectCalls } from "./direct-calls.ts";
import { portableListing } from "./portable-schema.ts";
import { errorResult } from "./result.ts";
import type { McpSession } from "./session.ts";
import { registerTools, type ToolDef } from "./tool.ts";
import { ALL_TOOLS } from "./tools/index.ts";

/** serverInfo.version: the build as a semantic version with its commit as build metadata (`0.1.0+3e7ee1a4c2d1`). */
const VERSION = buildSemver(THIS_BUILD);

/** Sent to the client at initialize; clients show it to the model as the server's usage guide. */
export const INSTRUCTIONS = [
  "git-handoff coordinates parallel coding agents working in one git repository; its state lives in git refs, shared by every worktree.",
  "Start with load_context (pass `objective` to declare what you work on). Claim a task (claim_task or claim_next) before working on it, renew_task while the work outlasts the lease, complete_task when committed (or release_task / fail_task).",
  "complete_task runs the task's verify command: passed -> review (a reviewer calls accept_review or reject_review), failed -> verification_failed and you keep the task. A slow verification answers state `verifying`: call wait_task on the task for the verdict.",
  "Every result's structuredContent opens with a one-line `summary`, and often `next`: the tool calls that make sense now.",
  "A refusal is a result with isError and a structured `error` {code, message, recoverable, data, suggestions}: held_by_other names data.holder and data.expires_at; follow the suggestions (they name tools) rather than retrying in a loop.",
].join("\n");

export function createServer(session: McpSession, opts: { tools?: readonly ToolDef[]; log?: (line: string) => void } = {}): McpServer {
  const server = new McpServer({ name: "git-handoff", version: VERSION }, { instructions: INSTRUCTIONS });
  const tools = registerTools(server, session, opts.tools ?? ALL_TOOLS, opts.log ?? ((l) => process.stderr.write(`git-handoff mcp: ${l}\n`)));
  direct.set(server, new DirectCalls(tools));
  structureSdkErrors(server);
  trustOwnOutput(server);
  portableListing(server);
  return server;
}

const direct = new WeakMap<McpServer, DirectCalls>();

/** The plain calls of this server's tools answered without the SDK's request machinery (direct-calls.ts). */
export function directCalls(server: McpServer): DirectCalls {
  return direct.get(server)!;
}

/**
 * McpServer checks every result against the tool's own output schema before sending it, about
 * 0.04 ms of each call (a claim's answer is ~1.3 ms end to end): a check of this server by
 * itself. The results are built from those schemas' types, and the clients of the test suite
 * check every result they receive against the schemas tools/list publishes (test/support/mcp.ts
 * lists the tools first, so the SDK's Client validates each call), as a strict client would.
 * `validateToolOutput` is internal to McpServer (1.32); should a later SDK drop it, results are
 * checked twice again, nothing else changes.
 */
function trustOwnOutput(server: McpServer): void {
  const target = server as unknown as { validateToolOutput?: (...args: unknown[]) => Promise<void> };
  if (typeof target.validateToolOutput !== "function") return;
  target.validateToolOutput = async () => {};
}

/**
 * Errors the SDK raises before a handler runs (arguments that fail the input schema, an unknown
 * tool) come back as text-only tool errors. This gives them the same structured body as our
 * refusals, so an agent reads `error.code` in every case. `createToolError` is internal to
 * McpServer (1.32); should a later SDK drop it, these errors stay text-only and
 * test/mcp-tools.test.ts fails.
 */
function structureSdkErrors(server: McpServer): void {
  const target = server as unknown as { createToolError?: (message: string) => CallToolResult };
  if (typeof target.createToolError !== "function") return;
  target.createToolError = (raw: string) => {
    // One line, as every refusal's message is: zod lists one failed argument a line.
    const message = raw.replace(/^MCP error -?\d+: /, "").replace(/\s*\n\s*/g, "; ");
    const code: ErrorCode = /^Input validation error/.test(message) ? "invalid_input" : /^Tool \S+ (not found|disabled)/.test(message) ? "usage" : "internal";
    return errorResult(new HandoffError({ code, message }));
  };
}
