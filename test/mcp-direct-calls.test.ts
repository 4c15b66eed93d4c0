// Plain tool calls answered without the SDK's request machinery (direct-calls.ts) over our stdio
// framing (line-transport.ts): raw JSON-RPC lines in, lines out, so each case says exactly which
// messages take the direct path, which the SDK answers, and that both answer alike.
import { PassThrough } from "node:stream";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { LineTransport } from "../src/mcp/line-transport.ts";
import { okResult, errorResult } from "../src/mcp/result.ts";
import { HandoffError } from "../src/core/errors.ts";
import { createServer, directCalls } from "../src/mcp/server.ts";
import { McpSession } from "../src/mcp/session.ts";
import { cleanEnv, cleanupTemp, tempRepo } from "./support/repo.ts";
import { storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

interface Wire {
  /** Writes raw bytes to the server's stdin. */
  write(text: string): void;
  /** Sends one request line and waits for the answer with its id (rejects after `ms`). */
  request(id: number | string, method: string, params?: unknown, extra?: Record<string, unknown>, ms?: number): Promise<any>;
  /** Waits for the answer with this id (or rejects after `ms`). */
  answer(id: number | string, ms?: number): Promise<any>;
  taken(): number;
  /** Direct calls whose handler has not returned yet. */
  inFlight(): number;
  errors: Error[];
  /** Notifications the server sent (no id), in order. */
  notes: any[];
  close(): Promise<void>;
  setDirect(on: boolean): void;
}

async function wire(repo: string): Promise<Wire> {
  const session = await McpSession.open({ cwd: repo, env: cleanEnv({}), agent: "direct-test", waitBoundMs: 3000, pollMs: 50 });
  const server = createServer(session, { log: () => {} });
  const input = new PassThrough();
  const output = new PassThrough();
  const transport = new LineTransport(input, output);
  const direct = directCalls(server);
  let on = true;
  transport.direct = (m, send) => on && direct.take(m, send);
  const errors: Error[] = [];
  const notes: any[] = [];
  transport.onerror = (e) => errors.push(e);
  await server.connect(transport);
  const answers = new Map<string, any>();
  const waiting = new Map<string, (a: any) => void>();
  let rest = "";
  output.on("data", (b: Buffer) => {
    rest += b.toString("utf8");
    for (let nl = rest.indexOf("\n"); nl >= 0; nl = rest.indexOf("\n")) {
      const msg = JSON.parse(rest.slice(0, nl));
      rest = rest.slice(nl + 1);
      if (msg.id === undefined) {
        notes.push(msg);
        continue;
      }
      const key = JSON.stringify(msg.id);
      const w = waiting.get(key);
      if (w) {
        waiting.delete(key);
        w(msg);
      } else answers.set(key, msg);
    }
  });
  const answer = (id: number | string, ms = 20_000) =>
    new Promise<any>((resolve, reject) => {
      const key = JSON.stringify(id);
      if (answers.has(key)) {
        resolve(answers.get(key));
        answers.delete(key);
        return;
      }
      const t = setTimeout(() => {
        waiting.delete(key);
        reject(new Error(`no answer for ${key} within ${ms} ms`));
      }, ms);
      waiting.set(key, (a) => {
        clearTimeout(t);
        resolve(a);
      });
    });
  const w: Wire = {
    write: (text) => input.write(text),
    request: (id, method, params, extra = {}, ms) => {
      input.write(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }), ...extra }) + "\n");
      return answer(id, ms);
    },
    answer,
    taken: () => direct.taken,
    inFlight: () => direct.inFlight,
    errors,
    notes,
    setDirect: (v) => (on = v),
    close: async () => {
      await server.close();
      session.close();
    },
  };
  await w.request(0, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } });
  input.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  return w;
}

/** A test body run against a server over a repository of two tasks with scopes, closed after. */
function withWire(body: (w: Wire) => Promise<void>): () => Promise<void> {
  return async () => {
    const w = await wire(await repoWithTasks());
    try {
      await body(w);
    } finally {
      await w.close();
    }
  };
}

async function repoWithTasks(): Promise<string> {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "setup" }, [["a", "src/a/**"], ["b", "src/b/**"]].map(([id, scope]) => ({ id: id!, objective: `objective ${id}`, scope: [scope!] })));
  return repo;
}

test("a plain call is answered directly, as the SDK would send it", withWire(async (w) => {
  const before = w.taken();
  const a = await w.request(1, "tools/call", { name: "claim_task", arguments: { id: "a" } });
  assert.is(w.taken(), before + 1);
  assert.equal(Object.keys(a), ["result", "jsonrpc", "id"]);
  assert.is(a.id, 1);
  assert.not.ok(a.result.isError);
  assert.is(a.result.structuredContent.task.status, "claimed");
  // String ids too, and the next call sees the first one's write.
  const b = await w.request("two", "tools/call", { name: "claim_task", arguments: { id: "a" } });
  assert.is(b.id, "two");
  assert.is(b.result.structuredContent.task.claim.agent, "direct-test");
  assert.is(w.taken(), before + 2);
}));

test("both paths give the same answer to the same call", withWire(async (w) => {
  for (const [name, args] of [
    ["list_tasks", { limit: 10 }],
    ["get_task", { id: "b" }],
    ["claim_task", { id: "nope" }],
    ["check_files", { paths: ["src/a/x.ts"] }],
  ] as const) {
    w.setDirect(false);
    const sdk = await w.request(`${name}-sdk`, "tools/call", { name, arguments: args });
    w.setDirect(true);
    const before = w.taken();
    const mine = await w.request(`${name}-direct`, "tools/call", { name, arguments: args });
    assert.is(w.taken(), before + 1, name);
    assert.equal(Object.keys(mine), Object.keys(sdk), name);
    assert.equal(mine.result, sdk.result, name);
  }
}));

test("what the direct path leaves to the SDK is answered by it, as before", withWire(async (w) => {
  const before = w.taken();
  // Arguments the tool's schema refuses: the SDK's invalid_input, said by it.
  const bad = await w.request(1, "tools/call", { name: "claim_task", arguments: { id: 7 } });
  assert.ok(bad.result.isError);
  assert.is(bad.result.structuredContent.error.code, "invalid_input");
  // An unknown tool.
  const unknown = await w.request(2, "tools/call", { name: "no_such_tool", arguments: {} });
  assert.ok(unknown.result.isError);
  assert.is(unknown.result.structuredContent.error.code, "usage");
  // A call that belongs to a task (the SDK's tasks), and a progress token the request schema refuses.
  const related = await w.request(3, "tools/call", { name: "list_tasks", arguments: {}, _meta: { "io.modelcontextprotocol/related-task": { taskId: "x" } } });
  assert.ok(related.result || related.error);
  // (the SDK's transport check drops that message and reports it: no answer)
  const errorsBefore = w.errors.length;
  const badToken = w.request(7, "tools/call", { name: "list_tasks", arguments: {}, _meta: { progressToken: 1.5 } }, {}, 1000).catch(() => null);
  // Arguments that are not an object, a name that is not a string: said as a refusal (the SDK's
  // answer was an internal error with its schema's dump).
  for (const [n, params] of [[4, { name: "list_tasks", arguments: [1] }], [8, { name: "list_tasks", arguments: null }], [9, { name: 5, arguments: {} }]] as const) {
    const r = await w.request(n, "tools/call", params);
    assert.ok(r.result?.isError, JSON.stringify(r));
    assert.is(r.result.structuredContent.error.code, "invalid_input");
    assert.match(r.result.structuredContent.error.message, /^invalid tools\/call: (arguments must be an object|the tool's name must be a string)/);
  }
  // A key the request schema does not name.
  const extraKey = w.request(5, "tools/call", { name: "list_tasks", arguments: {} }, { other: true }, 1000).catch(() => null);
  // Methods other than tools/call.
  const tools = await w.request(6, "tools/list");
  assert.ok(tools.result.tools.length > 10);
  await extraKey;
  assert.is(await badToken, null);
  assert.ok(w.errors.length > errorsBefore, "the dropped message is reported");
  assert.is(w.taken(), before, "none of these took the direct path");
}));

test("calls as the agent clients send them, with their _meta, take the direct path; a progress token gets progress", withWire(async (w) => {
  const before = w.taken();
  // As captured from the real clients of test/agents-real-*.test.ts.
  const claude = await w.request(1, "tools/call", { name: "get_task", arguments: { id: "a" }, _meta: { "claudecode/toolUseId": "toolu_0_0", progressToken: 2 } });
  const codex = await w.request(2, "tools/call", { _meta: { callId: "call_0_0", "x-codex-turn-metadata": { session_id: "s", turn_id: "t", sandbox: "none" } }, name: "get_task", arguments: { id: "a" } });
  const gemini = await w.request(3, "tools/call", { name: "get_task", arguments: { id: "a" }, _meta: { progressToken: "fc3d4e4b-a33c-4588-8cd7-a46324b7b32b" } });
  for (const a of [claude, codex, gemini]) assert.is(a.result.structuredContent.task.id, "a");
  assert.is(w.taken(), before + 3);
  // A wait that reports progress: the token it came with, before the answer.
  await w.request(4, "tools/call", { name: "claim_task", arguments: { id: "b" } });
  const waited = await w.request(5, "tools/call", { name: "wait_task", arguments: { id: "b", timeout_seconds: 2 }, _meta: { progressToken: "p-5" } });
  assert.ok(waited.result.structuredContent, JSON.stringify(waited));
  const progress = w.notes.filter((n) => n.method === "notifications/progress");
  assert.ok(progress.length >= 1, JSON.stringify(w.notes));
  for (const n of progress) {
    assert.is(n.jsonrpc, "2.0");
    assert.is(n.params.progressToken, "p-5");
    assert.type(n.params.progress, "number");
  }
  assert.is(w.taken(), before + 5);
}));

test("lines split across chunks, several in one chunk, CRLF ends, and a line that is not JSON", withWire(async (w) => {
  const before = w.taken();
  const line = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "get_task", arguments: { id: "a" } } });
  const one = line(11);
  w.write(one.slice(0, 17));
  await new Promise((r) => setTimeout(r, 20));
  w.write(one.slice(17) + "\r\n" + "{not json\n" + line(12) + "\n" + line(13).slice(0, 5));
  w.write(line(13).slice(5) + "\n");
  for (const id of [11, 12, 13]) {
    const a = await w.answer(id);
    assert.is(a.result.structuredContent.task.id, "a");
  }
  assert.is(w.taken(), before + 3);
  assert.is(w.errors.length, 1, "the line that is not JSON is reported");
}));

test("a line past 10 MB without its end closes the transport, as the SDK's does", withWire(async (w) => {
  const chunk = "x".repeat(1024 * 1024);
  for (let i = 0; i < 11; i++) w.write(chunk);
  await new Promise((r) => setTimeout(r, 50));
  assert.ok(w.errors.some((e) => /exceeded maximum size/.test(e.message)), w.errors.map((e) => e.message).join("; "));
  w.write(JSON.stringify({ jsonrpc: "2.0", id: "late", method: "tools/call", params: { name: "get_task", arguments: { id: "a" } } }) + "\n");
  assert.is(await w.answer("late", 500).catch(() => null), null, "nothing is read after the transport closed");
}));

test("a cancelled direct call gets no answer and its wait ends", withWire(async (w) => {
  await w.request(1, "tools/call", { name: "claim_task", arguments: { id: "b" } });
  const before = w.taken();
  w.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "wait_task", arguments: { id: "b", timeout_seconds: 3 } } }) + "\n");
  await new Promise((r) => setTimeout(r, 150));
  assert.is(w.taken(), before + 1);
  const t0 = Date.now();
  w.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2, reason: "test" } }) + "\n");
  assert.is(w.inFlight(), 1);
  // The wait stops at once rather than running out its 3 s, and says nothing.
  while (w.inFlight() > 0 && Date.now() - t0 < 2500) await new Promise((r) => setTimeout(r, 20));
  assert.is(w.inFlight(), 0, "the cancelled wait ended");
  const got = await w.answer(2, 3500 - (Date.now() - t0)).then(
    (a) => a,
    () => null,
  );
  assert.is(got, null, "no answer to a cancelled call");
  const next = await w.request(3, "tools/call", { name: "get_task", arguments: { id: "b" } });
  assert.is(next.result.structuredContent.task.id, "b");
}));

test("the SDK's result check is the identity on the results we build", () => {
  for (const r of [
    okResult({ task: { id: "t", status: "claimed", nested: { a: [1, "x", null] } }, overlaps: [] }, "claimed t\nmore", "claimed t", [{ tool: "renew_task", args: { id: "t" }, why: "later" }] as never),
    okResult({}, "plain"),
    errorResult(new HandoffError({ code: "held_by_other", message: "held by x", data: { holder: "x" } })),
    errorResult(new Error("boom")),
  ]) {
    assert.is(JSON.stringify(CallToolResultSchema.parse(r)), JSON.stringify(r));
  }
});

test.run();
