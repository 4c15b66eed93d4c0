// Every tool answers the same way: structuredContent for programs, a text rendering for the model.
// Refusals and errors are results too (isError: true), with the CLI's error body, so an agent
// reads the same code, holder and suggestions a script reads from `--json`.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { HandoffError, type Refusal } from "../core/errors.ts";
import { errorBody } from "../cli/output.ts";

export function okResult(data: Record<string, unknown>, text: string): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: data };
}

export function refusalOf(e: unknown): Refusal {
  return e instanceof HandoffError ? e.refusal : { code: "internal", message: `unexpected error: ${(e as Error)?.message ?? String(e)}` };
}

export function errorResult(e: unknown): CallToolResult {
  const refusal = refusalOf(e);
  const body = errorBody(refusal);
  const lines = [`${refusal.code}: ${refusal.message}`];
  if (body.recoverable) lines.push("(recoverable: the same call may succeed later)");
  for (const s of refusal.suggestions ?? []) lines.push(`- ${s.action}: ${s.detail}`);
  return { content: [{ type: "text", text: lines.join("\n") }], structuredContent: { error: body }, isError: true };
}
