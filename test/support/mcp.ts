// Test support for the MCP server: an in-process server and client joined by the SDK's in-memory
// transport, and a real client spawning the built `git-handoff mcp` over stdio.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { createServer, directCalls } from "../../src/mcp/server.ts";
import { McpSession } from "../../src/mcp/session.ts";
import { cleanEnv, cliStart } from "./repo.ts";

export interface McpHandle {
  client: Client;
  /** What the server wrote to stderr (stdio servers only). */
  stderr(): string;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** Calls a tool that must succeed; returns its structuredContent. */
  ok(name: string, args?: Record<string, unknown>): Promise<any>;
  /** Calls a tool that must be refused; returns the structured error body. */
  refused(name: string, args?: Record<string, unknown>): Promise<any>;
  close(): Promise<void>;
}

/**
 * The output-schema checker every test client shares. The SDK's client makes a new ajv instance of
 * its own and compiles every tool's output schema at each `listTools()`: ~60 schemas, ~1.5
 * CPU-seconds a client, most of an MCP test file's CPU (a profile of mcp-tools.test.ts: ajv 22 of
 * its 44 s). Here each schema (by its JSON text) is compiled once a process; the check of every
 * result is the same.
 */
const sharedAjv = new AjvJsonSchemaValidator();
const compiled = new Map<string, JsonSchemaValidator<unknown>>();
export const testSchemaValidator: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const key = JSON.stringify(schema);
    let v = compiled.get(key);
    if (!v) compiled.set(key, (v = sharedAjv.getValidator(schema)));
    return v as JsonSchemaValidator<T>;
  },
};

function handle(client: Client, close: () => Promise<void>, stderr: () => string = () => ""): McpHandle {
  const call = (name: string, args: Record<string, unknown> = {}) =>
    client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 }) as Promise<CallToolResult>;
  return {
    client,
    stderr,
    call,
    async ok(name, args) {
      const r = await call(name, args);
      if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
      return r.structuredContent;
    },
    async refused(name, args) {
      const r = await call(name, args);
      if (!r.isError) throw new Error(`${name} was expected to be refused, got ${JSON.stringify(r.structuredContent)}`);
      const body = (r.structuredContent as { error?: unknown } | undefined)?.error;
      if (!body) throw new Error(`${name} refusal has no structured error: ${JSON.stringify(r.content)}`);
      return body;
    },
    close,
  };
}

export interface InProcessOptions {
  agent?: string;
  env?: NodeJS.ProcessEnv;
  waitBoundMs?: number;
  pollMs?: number;
}

export async function inProcess(repo: string, o: InProcessOptions = {}): Promise<McpHandle> {
  const session = await McpSession.open({
    cwd: repo,
    env: cleanEnv(o.env ?? {}),
    ...(o.agent !== undefined ? { agent: o.agent } : {}),
    waitBoundMs: o.waitBoundMs ?? 5000,
    pollMs: o.pollMs ?? 50,
  });
  const logs: string[] = [];
  const server = createServer(session, { log: (l) => logs.push(l) });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  directCalls(server).attach(serverSide); // plain calls answered as the stdio server answers them (direct-calls.ts)
  const client = new Client({ name: "handoff-test", version: "0" }, { jsonSchemaValidator: testSchemaValidator });
  await client.connect(clientSide);
  await client.listTools(); // from now on the client checks every result against the published output schemas
  return handle(client, async () => {
    await client.close();
    await server.close();
    session.close();
  });
}

/**
 * `checkOutput: false` (the benches): the client does not check results against the published
 * schemas, as the peer's client in the same bench does not (the check is the client's time).
 */
export async function overStdio(repo: string, o: { agent?: string; args?: string[]; env?: NodeJS.ProcessEnv; checkOutput?: boolean } = {}): Promise<McpHandle> {
  const { argv, env } = cliStart(["mcp", ...(o.args ?? [])], { cwd: repo, ...(o.agent ? { agent: o.agent } : {}), ...(o.env ? { env: o.env } : {}) });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: argv,
    cwd: repo,
    env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (b: Buffer) => (err += b.toString()));
  const client = new Client({ name: "handoff-e2e", version: "0" }, { jsonSchemaValidator: testSchemaValidator });
  await client.connect(transport);
  if (o.checkOutput !== false) await client.listTools(); // as in inProcess: every result is checked against the published output schemas
  return handle(client, () => client.close(), () => err);
}
