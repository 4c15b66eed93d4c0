// The tool registry. A tool is one entry: name, agent-facing description, zod input and output
// shapes, and a `run` that calls the same store function as the CLI verb. Adding an operation
// (leases, handoffs, agents) means adding one `defineTool` entry to a file under tools/ and
// listing it in tools/index.ts; validation, error bodies and text rendering come from here.
import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod/mini";
import { refreshHeartbeat } from "../store/agent-store.ts";
import type { Store } from "../store/store.ts";
import type { NextCall } from "../present/suggestions.ts";
import { errorResult, okResult, refusalOf } from "./result.ts";
import { envelope, type Shape } from "./schemas.ts";
import type { McpSession } from "./session.ts";

export interface ToolReply {
  data: Record<string, unknown>;
  text: string;
  /** One line for structuredContent.summary (default: the first line of `text`). */
  summary?: string;
  /** The tool calls that make sense now. */
  next?: NextCall[];
  /** What the CLI says on stderr beside this result (structuredContent.notices, with the store's own). */
  notices?: string[];
}

export interface ToolContext {
  session: McpSession;
  /** Aborted when the client cancels the call (or disconnects). */
  signal: AbortSignal;
  /** Reports progress of a long call, when the client asked for it (progressToken). */
  progress(done: number, total: number, message: string): Promise<void>;
}

export interface ToolDef<S extends Shape = Shape> {
  name: string;
  title: string;
  description: string;
  input: S;
  output: Shape;
  annotations?: ToolAnnotations;
  run(args: z.infer<z.ZodMiniObject<S>>, ctx: ToolContext): Promise<ToolReply>;
}

export function defineTool<S extends Shape>(def: ToolDef<S>): ToolDef {
  return def as unknown as ToolDef;
}

/** What a tool handler receives from the SDK (the parts we use), or from direct-calls.ts. */
export interface ToolExtra {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification(n: { method: "notifications/progress"; params: Record<string, unknown> }): Promise<void>;
}

/** Registers each tool with the SDK; returns the registrations by name, for plain calls taken directly (direct-calls.ts). */
export function registerTools(server: McpServer, session: McpSession, tools: readonly ToolDef[], log: (line: string) => void): Map<string, RegisteredTool> {
  const registered = new Map<string, RegisteredTool>();
  for (const tool of tools) {
    const handler = async (args: unknown, extra: ToolExtra): Promise<CallToolResult> => {
      const token = extra._meta?.progressToken;
      const ctx: ToolContext = {
        session,
        signal: extra.signal,
        progress: async (done, total, message) => {
          if (token === undefined) return;
          await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: done, total, message } }).catch(() => {});
        },
      };
      session.callStarted();
      try {
        const reply = await tool.run((args ?? {}) as never, ctx);
        // Issue 4: every successful call of an agent with an open session refreshes its heartbeat (throttled).
        const store = await session.storeOfCall();
        await refreshHeartbeat(store);
        return okResult(reply.data, reply.text, reply.summary, reply.next, noticesOf(store, reply.notices));
      } catch (caught) {
        const e = session.explainFailure(caught);
        const r = refusalOf(e);
        if (r.code === "internal") log(`${tool.name}: ${(e as Error)?.stack ?? String(e)}`);
        return errorResult(e);
      } finally {
        session.callEnded();
      }
    };
    const entry = server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        // Strict: an argument the tool does not take (a misspelt `staus`, a filter it lacks) is
        // refused with invalid_input, not dropped, so a call never quietly does less than asked.
        // The listing leaves `additionalProperties: false` out (portable-schema.ts): Gemini's
        // API refuses tool schemas that carry it.
        inputSchema: z.strictObject(tool.input),
        outputSchema: envelope(tool.output),
        ...(tool.annotations ? { annotations: tool.annotations } : {}),
      },
      handler as never,
    );
    registered.set(tool.name, entry);
  }
  return registered;
}

/**
 * What the CLI would say on stderr beside this call's result: the notices the store gathered since
 * the last call, the tool's own, and a committed policy that does not parse at every call while it stands (the
 * store is opened once, and an agent may not read the first answer's notice).
 */
function noticesOf(store: Store, own: string[] = []): string[] {
  const standing = store.policySource?.fallback;
  return [...new Set([...(standing ? [standing] : []), ...store.notices.splice(0), ...own])];
}
