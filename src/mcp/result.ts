// Every tool answers the same way: structuredContent for programs, a text rendering for the model.
// Refusals and errors are results too (isError: true), with the CLI's error body, so an agent
// reads the same code, holder and suggestions a script reads from `--json`.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Refusal } from "../core/errors.ts";
import { errorBody, refusalFor } from "../present/output.ts";

export function okResult(data: Record<string, unknown>, text: string): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: data };
}

export function refusalOf(e: unknown): Refusal {
  return refusalFor(e);
}

/**
 * Core suggestions name CLI commands; an agent talking MCP should read the tool to call instead.
 * Commands without a tool here are left as they are (still meaningful to a reader).
 */
const CLI_TO_TOOL: [RegExp, string][] = [
  [/git handoff claim --next/g, "claim_next"],
  [/git handoff claim (\S+)/g, 'claim_task {"id": "$1"}'],
  [/git handoff release (\S+)/g, 'release_task {"id": "$1"}'],
  [/git handoff renew (\S+)/g, 'renew_task {"id": "$1"}'],
  [/git handoff status/g, "overview"],
  [/git handoff (task list|tasks)/g, "list_tasks"],
  [/git handoff events/g, "events"],
];

export function forAgents(refusal: Refusal): Refusal {
  if (!refusal.suggestions?.length) return refusal;
  const suggestions = refusal.suggestions.map((s) => ({ ...s, detail: CLI_TO_TOOL.reduce((d, [re, tool]) => d.replace(re, tool), s.detail) }));
  return { ...refusal, suggestions };
}

export function errorResult(e: unknown): CallToolResult {
  const refusal = forAgents(refusalOf(e));
  const body = errorBody(refusal);
  const lines = [`${refusal.code}: ${refusal.message}`];
  if (body.recoverable) lines.push("(recoverable: the same call may succeed later)");
  for (const s of refusal.suggestions ?? []) lines.push(`- ${s.action}: ${s.detail}`);
  return { content: [{ type: "text", text: lines.join("\n") }], structuredContent: { error: body }, isError: true };
}
