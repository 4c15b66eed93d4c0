// Plain tool calls answered without the SDK's request machinery. A warm claim's answer took
// about 3.6 ms in the server on a slow bench machine, 0.5 ms of it between the bytes arriving and
// our handler starting (the message checked against the union of every JSON-RPC schema, the
// request against CallToolRequestSchema twice, a promise chain per layer) and 0.1 ms after it
// returned (the result parsed again on its way out); this path takes about half of that. A request that is exactly `{jsonrpc, id, method:
// "tools/call", params: {name, arguments}}` for a registered, enabled tool whose arguments pass
// that tool's own input schema goes straight to the handler the SDK would have called, with the
// same arguments (the schema's parsed output), and its result goes out as the SDK would send it
// (`{result, jsonrpc, id}`; McpServer's result check is the identity on results built by
// result.ts, test/mcp-direct-calls.test.ts). `params._meta` is taken too, as every agent client
// sends one (Claude Code its tool-use id and a progress token, Codex its call and turn, Gemini
// CLI a progress token): the handler gets it, and its progress notifications go out as the SDK
// sends them. Everything else (other methods, task-augmented calls or a related task in
// `_meta`, a progress token that is not a string or an integer, arguments the schema refuses, an
// unknown tool) goes to the SDK, which answers as before: this path never has to say what is wrong.
import type { RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod/mini";
import { HandoffError } from "../core/errors.ts";
import { errorResult } from "./result.ts";
import type { ToolExtra } from "./tool.ts";

/** A tool's handler as registered with the SDK (tool.ts), called with the parsed arguments. */
type ToolHandler = (args: unknown, extra: ToolExtra) => Promise<CallToolResult>;

type RequestId = string | number;

const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const PARAM_KEYS = new Set(["name", "arguments", "_meta"]);
/** `_meta` naming a task this request belongs to (the SDK's RELATED_TASK_META_KEY): the SDK's tasks handle it. */
const RELATED_TASK = "io.modelcontextprotocol/related-task";

/** `_meta` as the SDK's request schema takes it without a task: absent, or an object whose progress token, if any, is a string or an integer. */
function plainMeta(meta: unknown): meta is ToolExtra["_meta"] {
  if (meta === undefined) return true;
  if (!plainObject(meta) || RELATED_TASK in meta) return false;
  const token = meta.progressToken;
  return token === undefined || typeof token === "string" || Number.isSafeInteger(token);
}

function plainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function onlyKeys(o: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const k in o) if (!allowed.has(k)) return false;
  return true;
}

export class DirectCalls {
  /**
   * Calls under way here, by request id, until their handler returns: a cancellation or a closed
   * transport aborts them (as the SDK does its own). An id under way is not taken a second time.
   */
  private readonly running = new Map<RequestId, AbortController>();
  /** How many calls took this path (tests check that it is taken). */
  taken = 0;

  /** Calls taken and not yet finished (a cancelled one finishes when its handler returns). */
  get inFlight(): number {
    return this.running.size;
  }

  /** `tools`: each tool as the SDK registered it, by name (its handler and schema read at each call, as the SDK reads them). */
  constructor(private readonly tools: ReadonlyMap<string, RegisteredTool>) {}

  /**
   * Answers `message` if it is a plain call of a tool here (true), or leaves it to the SDK (false).
   * `message` may be unchecked JSON (line-transport.ts checks only what it hands on).
   */
  take(message: unknown, send: (m: JSONRPCMessage) => Promise<void>): boolean {
    if (!plainObject(message)) return false;
    if (message.method === "notifications/cancelled") {
      // The SDK sees it too (false below) and finds no call of its own by that id.
      const p = message.params;
      if (plainObject(p) && (typeof p.requestId === "string" || typeof p.requestId === "number")) this.running.get(p.requestId)?.abort(p.reason);
      return false;
    }
    if (message.method !== "tools/call" || message.jsonrpc !== "2.0" || !onlyKeys(message, REQUEST_KEYS)) return false;
    const id = message.id;
    if (!(typeof id === "string" || Number.isSafeInteger(id)) || this.running.has(id as RequestId)) return false;
    const params = message.params;
    if (plainObject(params) && (typeof params.name !== "string" || (params.arguments !== undefined && !plainObject(params.arguments)))) {
      // The SDK answers these with an internal error (-32603) and its schema's dump: say what is wrong, as a refusal does.
      const what = typeof params.name !== "string" ? "the tool's name must be a string" : "arguments must be an object of the tool's named arguments";
      send({ result: errorResult(new HandoffError({ code: "invalid_input", message: `invalid tools/call: ${what}` })), jsonrpc: "2.0", id } as JSONRPCMessage).catch(() => {});
      return true;
    }
    if (!plainObject(params) || !onlyKeys(params, PARAM_KEYS) || typeof params.name !== "string" || !plainMeta(params._meta)) return false;
    const args = params.arguments;
    const tool = this.tools.get(params.name);
    // Tools that may run as tasks are the SDK's (ours are registered with taskSupport forbidden).
    const tasks = tool?.execution?.taskSupport;
    if (!tool || !tool.enabled || !tool.inputSchema || (tasks !== undefined && tasks !== "forbidden")) return false;
    let parsed: { success: boolean; data?: unknown };
    try {
      parsed = z.safeParse(tool.inputSchema as z.ZodMiniType, args ?? {});
    } catch {
      return false; // a schema with async parts: the SDK parses it
    }
    if (!parsed.success) return false;
    this.run(id as RequestId, tool.handler as unknown as ToolHandler, parsed.data, params._meta, send);
    return true;
  }

  /** Installs this in front of a connected transport (the SDK's in-memory one in tests). */
  attach(transport: Transport): void {
    const sdk = transport.onmessage;
    const onclose = transport.onclose;
    transport.onmessage = (m, extra) => {
      if (!this.take(m, (r) => transport.send(r))) sdk?.(m, extra);
    };
    transport.onclose = () => {
      this.abortAll();
      onclose?.();
    };
  }

  abortAll(): void {
    for (const c of this.running.values()) c.abort();
  }

  private run(id: RequestId, handler: ToolHandler, args: unknown, meta: ToolExtra["_meta"], send: (m: JSONRPCMessage) => Promise<void>): void {
    const controller = new AbortController();
    this.running.set(id, controller);
    this.taken++;
    const answer = (result: CallToolResult) => {
      this.running.delete(id);
      // A cancelled call gets no answer (the SDK's rule: the client has stopped waiting for it).
      if (controller.signal.aborted) return;
      send({ result, jsonrpc: "2.0", id } as JSONRPCMessage).catch(() => {});
    };
    // Our handlers turn every failure into a result; a throw past them is answered as McpServer
    // answers it, a tool error.
    const extra: ToolExtra = {
      signal: controller.signal,
      ...(meta ? { _meta: meta } : {}),
      // As the SDK's: nothing once the call is cancelled, else the notification as it came.
      sendNotification: async (n) => {
        if (!controller.signal.aborted) await send({ ...n, jsonrpc: "2.0" } as JSONRPCMessage);
      },
    };
    handler(args, extra).then(answer, (e: unknown) => answer(errorResult(e)));
  }
}
