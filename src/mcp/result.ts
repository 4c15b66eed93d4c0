// Every tool answers the same way: structuredContent for programs (and for the models of most
// clients, which read the JSON rather than the text), a text rendering for the others. Each
// structuredContent opens with a one-line `summary`, and where it helps `next`: the tool calls
// that make sense now. Refusals and errors are results too (isError: true), with the CLI's error
// body, so an agent reads the same code, holder and suggestions a script reads from `--json`,
// with the suggestions naming tools instead of CLI commands.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Refusal } from "../core/errors.ts";
import { errorBody, refusalOfError } from "../present/output.ts";
import { neutralise, neutraliseLine } from "../present/untrusted.ts";
import { refusalFor, type NextCall } from "../present/suggestions.ts";

export function okResult(data: Record<string, unknown>, text: string, summary?: string, next?: NextCall[], notices: string[] = []): CallToolResult {
  const structured = { summary: neutraliseLine(summary ?? firstLine(text)), ...(next?.length ? { next } : {}), ...(notices.length ? { notices } : {}), ...data };
  const told = notices.map((n) => `\nnotice: ${n}`).join("");
  return { content: [{ type: "text", text: neutralise(text + told) }], structuredContent: structured };
}

export function refusalOf(e: unknown): Refusal {
  return refusalOfError(e);
}

/** The refusal as an MCP client should read it: suggestions name tools, never CLI commands. */
export function forAgents(refusal: Refusal): Refusal {
  return refusalFor(refusal, "mcp");
}

export function errorResult(e: unknown): CallToolResult {
  const refusal = forAgents(refusalOf(e));
  const body = errorBody(refusal);
  const lines = [`${refusal.code}: ${refusal.message}`];
  if (body.recoverable) lines.push("(recoverable: the same call may succeed later)");
  for (const s of refusal.suggestions ?? []) lines.push(`- ${s.action}: ${s.detail}`);
  const verb = refusal.code === "internal" ? "failed" : "refused";
  const summary = `${verb} (${refusal.code}${body.recoverable ? ", recoverable" : ""}): ${firstLine(refusal.message)}`;
  // A refusal quotes other agents' words (a lease's reason, a task's objective): the text and the
  // summary an agent reads show their control and bidi characters as escapes, as every answer does.
  return { content: [{ type: "text", text: neutralise(lines.join("\n")) }], structuredContent: { summary: neutraliseLine(summary), error: body }, isError: true };
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}
