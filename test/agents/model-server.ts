// A scripted model on 127.0.0.1 for the real agent clients: it speaks the Anthropic Messages API,
// the OpenAI Responses API and the Gemini streamGenerateContent API (all as server-sent events),
// plays a scenario (tool calls, then a final text) and records every request, so a test asserts
// on exactly what reached the model. No network beyond this socket, no API key.
import { createServer, type IncomingMessage, type Server } from "node:http";

/** One tool call the model makes: a tool name and its input, as the client's tool expects it. */
export interface ToolCall {
  name: string;
  input: Record<string, unknown> | string;
}

/**
 * The model's turns, in order: each is tool calls (answered by the client with results) or the
 * final text. Which turn to play is counted from the conversation in the request (how many
 * model turns it already holds), so retries and side requests never shift the script.
 */
export type Turn = { tools: ToolCall[]; needs?: string } | { text: string };
// `needs`: a tool or namespace (a name prefix for Claude Code) the turn calls that the client may
// list only later (Codex and Claude Code connect MCP servers while the conversation starts). Until
// the request lists it, the model waits as a model would: a short shell command, not counted as a
// scripted turn.

export interface RecordedRequest {
  method: string;
  url: string;
  body: any;
  /** When it arrived (ms since the epoch): what a client run spends before and between turns. */
  at: number;
  /** Whether this request was a turn of the scripted conversation (not a side request). */
  main: boolean;
}

export interface ModelServer {
  url: string;
  requests: RecordedRequest[];
  /** Everything the model was sent in the conversation's requests, as one JSON text. */
  seen(): string;
  /** The tool results the client sent back, in order (their text as the model saw it). */
  toolResults(): string[];
  stop(): Promise<void>;
}

type Api = "anthropic" | "openai" | "gemini";

export async function startModel(api: Api, turns: Turn[]): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    const raw = await body(req);
    let parsed: any = null;
    try {
      parsed = raw ? JSON.parse(raw) : null;
    } catch {
      parsed = raw;
    }
    const reply = route(api, req, parsed, turns);
    requests.push({ method: req.method ?? "", url: req.url ?? "", body: parsed, main: reply.main, at: Date.now() });
    res.writeHead(reply.status, { "content-type": reply.type });
    res.end(reply.body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  const main = () => requests.filter((r) => r.main);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    seen: () => JSON.stringify(main().map((r) => r.body)),
    toolResults: () => {
      const last = main().at(-1)?.body;
      return last ? TOOL_RESULTS[api](last) : [];
    },
    stop: () => new Promise((r) => server.close(() => r())),
  };
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let s = "";
    req.on("data", (d) => (s += d));
    req.on("end", () => resolve(s));
  });
}

interface Reply {
  status: number;
  type: string;
  body: string;
  main: boolean;
}

const sse = (events: Array<[string | null, unknown]>) =>
  events.map(([name, data]) => `${name ? `event: ${name}\n` : ""}data: ${JSON.stringify(data)}\n\n`).join("");
const json = (v: unknown, main = false): Reply => ({ status: 200, type: "application/json", body: JSON.stringify(v), main });
const stream = (text: string): Reply => ({ status: 200, type: "text/event-stream", body: text, main: true });

function route(api: Api, req: IncomingMessage, body: any, turns: Turn[]): Reply {
  const url = req.url ?? "";
  if (req.method !== "POST") return json({});
  if (api === "anthropic" && url.startsWith("/v1/messages") && !url.includes("count_tokens")) {
    // Side requests (titles, summaries) carry no tools: a short text, off the script.
    if (!body?.tools?.length) return { ...stream(anthropicTurn({ text: "ok" }, 0)), main: false };
    const assistant = (body.messages ?? []).filter((m: any) => m.role === "assistant");
    const waits = assistant.filter((m: any) => JSON.stringify(m.content ?? "").includes('"toolu_wait_')).length;
    const done = assistant.length - waits;
    const turn = turnAt(turns, done);
    // Claude Code may list an MCP server's tools only once it has connected: wait as for Codex.
    if ("tools" in turn && turn.needs && !(body.tools ?? []).some((t: any) => String(t?.name ?? "").startsWith(turn.needs!))) {
      if (waits > 50) return stream(anthropicTurn({ text: `scripted model: ${turn.needs} never listed` }, assistant.length));
      return stream(anthropicTurn({ tools: [{ name: "Bash", input: { command: "sleep 0.3", description: "wait" } }] }, assistant.length, "toolu_wait_"));
    }
    // The message id is the turn's place in the conversation, not its scripted number: after a
    // wait (msg_0) the first scripted turn would be msg_0 again, and Claude Code joins assistant
    // messages of one id into one, so the scripted call landed inside the wait, was counted as a
    // wait, and was played again and again (a loaded machine, where MCP connects late).
    return stream(anthropicTurn(turn, done, "toolu_", assistant.length));
  }
  if (api === "anthropic" && url.includes("count_tokens")) return json({ input_tokens: 10 });
  if (api === "openai" && url.endsWith("/responses")) {
    const calls = (body?.input ?? []).filter((i: any) => /_call$/.test(i?.type ?? ""));
    const done = calls.filter((c: any) => !String(c.call_id).startsWith("wait_")).length;
    // One model turn may make several calls: count turns by calls answered, as scripted.
    const turn = turnAt(turns, turnsDone(turns, done));
    if ("tools" in turn && turn.needs && !JSON.stringify(body?.tools ?? []).includes(`"${turn.needs}"`)) {
      if (calls.length - done > 50) return stream(openaiTurn({ text: `scripted model: ${turn.needs} never listed` }, calls.length));
      return stream(openaiTurn({ tools: [{ name: "exec_command", input: { cmd: "sleep 0.2" } }] }, calls.length, "wait_"));
    }
    return stream(openaiTurn(turn, calls.length));
  }
  if (api === "gemini" && url.includes(":streamGenerateContent")) {
    const contents: any[] = body?.contents ?? [];
    if (!body?.tools?.length) return { ...stream(geminiTurn({ text: "ok" })), main: false };
    const done = contents.filter((c) => c.role === "model").length;
    return stream(geminiTurn(turnAt(turns, done)));
  }
  if (api === "gemini" && url.includes(":generateContent")) {
    // The client's own side questions (routing, next speaker) want JSON text back.
    return json({ candidates: [{ content: { role: "model", parts: [{ text: '{"reasoning":"scripted","complexity_reasoning":"scripted","complexity_score":10,"next_speaker":"user","model_choice":"flash"}' }] }, finishReason: "STOP", index: 0 }] });
  }
  if (api === "gemini" && url.includes(":countTokens")) return json({ totalTokens: 10 });
  return { status: 404, type: "application/json", body: JSON.stringify({ error: { message: `scripted model: no route for ${url}` } }), main: false };
}

function turnAt(turns: Turn[], i: number): Turn {
  return turns[Math.min(i, turns.length - 1)] ?? { text: "done" };
}

/** How many scripted turns `calls` answered tool calls cover. */
function turnsDone(turns: Turn[], calls: number): number {
  let n = 0;
  let left = calls;
  for (const t of turns) {
    if (!("tools" in t) || left < t.tools.length) break;
    left -= t.tools.length;
    n++;
  }
  return n;
}

const argsText = (c: ToolCall) => (typeof c.input === "string" ? c.input : JSON.stringify(c.input));

function anthropicTurn(t: Turn, n: number, prefix = "toolu_", message = n): string {
  const ev: Array<[string, unknown]> = [
    ["message_start", { type: "message_start", message: { id: `msg_${message}`, type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } }],
  ];
  if ("tools" in t) {
    t.tools.forEach((c, i) => {
      ev.push(["content_block_start", { type: "content_block_start", index: i, content_block: { type: "tool_use", id: `${prefix}${n}_${i}`, name: c.name, input: {} } }]);
      ev.push(["content_block_delta", { type: "content_block_delta", index: i, delta: { type: "input_json_delta", partial_json: argsText(c) } }]);
      ev.push(["content_block_stop", { type: "content_block_stop", index: i }]);
    });
  } else {
    ev.push(["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }]);
    ev.push(["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: t.text } }]);
    ev.push(["content_block_stop", { type: "content_block_stop", index: 0 }]);
  }
  ev.push(["message_delta", { type: "message_delta", delta: { stop_reason: "tools" in t ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } }]);
  ev.push(["message_stop", { type: "message_stop" }]);
  return sse(ev);
}

function openaiTurn(t: Turn, n: number, prefix = "call_"): string {
  const id = `resp_${n}`;
  const ev: Array<[string, unknown]> = [["response.created", { type: "response.created", response: { id } }]];
  if ("tools" in t) {
    t.tools.forEach((c, i) => {
      const call_id = `${prefix}${n}_${i}`;
      // A freeform tool (apply_patch) takes raw text; a function tool takes JSON arguments.
      // `namespace/tool` calls a tool of a namespace (Codex groups each MCP server's tools so).
      const [namespace, name] = c.name.includes("/") ? c.name.split("/", 2) : [undefined, c.name];
      const item =
        typeof c.input === "string"
          ? { type: "custom_tool_call", call_id, name, input: c.input }
          : { type: "function_call", call_id, name, ...(namespace ? { namespace } : {}), arguments: argsText(c) };
      ev.push(["response.output_item.done", { type: "response.output_item.done", item }]);
    });
  } else {
    ev.push(["response.output_item.done", { type: "response.output_item.done", item: { type: "message", role: "assistant", id: `msg_${n}`, content: [{ type: "output_text", text: t.text }] } }]);
  }
  ev.push(["response.completed", { type: "response.completed", response: { id, usage: { input_tokens: 10, input_tokens_details: null, output_tokens: 5, output_tokens_details: null, total_tokens: 15 } } }]);
  return sse(ev);
}

function geminiTurn(t: Turn): string {
  const parts = "tools" in t ? t.tools.map((c) => ({ functionCall: { name: c.name, args: c.input } })) : [{ text: t.text }];
  return sse([[null, { candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 } }]]);
}

const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

const TOOL_RESULTS: Record<Api, (body: any) => string[]> = {
  anthropic: (b) =>
    (b.messages ?? []).flatMap((m: any) => (Array.isArray(m.content) ? m.content : []).filter((c: any) => c.type === "tool_result" && !String(c.tool_use_id).startsWith("toolu_wait_")).map((c: any) => `${c.is_error ? "[error] " : ""}${text(c.content)}`)),
  openai: (b) => (b.input ?? []).filter((i: any) => /_call_output$/.test(i?.type ?? "") && !String(i.call_id).startsWith("wait_")).map((i: any) => text(i.output)),
  gemini: (b) => (b.contents ?? []).flatMap((c: any) => (c.parts ?? []).filter((p: any) => p.functionResponse).map((p: any) => text(p.functionResponse.response))),
};
