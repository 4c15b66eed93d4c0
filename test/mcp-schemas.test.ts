// Output schemas every client can read: the MCP Inspector's CLI lists the tools with no schema
// portability warning, no listed schema holds a type array or an empty schema, and the rewrite
// accepts exactly what zod accepts (results still validate in the SDK client).
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { portableSchema } from "../src/mcp/portable-schema.ts";
import { ALL_TOOLS } from "../src/mcp/tools/index.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import * as z from "zod/mini";
import { createServer } from "../src/mcp/server.ts";
import { McpSession } from "../src/mcp/session.ts";
import { defineTool } from "../src/mcp/tool.ts";
import { overStdio, type McpHandle } from "./support/mcp.ts";
import { CLI, cleanEnv, cleanupTemp, gitOut, tempRepo } from "./support/repo.ts";

const INSPECTOR = resolve(import.meta.dirname, "../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");
const open: McpHandle[] = [];
test.after.each(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});
test.after(cleanupTemp);

/** Every place in a schema where a type array or an empty schema sits. */
function unportable(schema: unknown, path = "$"): string[] {
  if (schema === null || typeof schema !== "object") return [];
  if (Array.isArray(schema)) return schema.flatMap((s, i) => unportable(s, `${path}[${i}]`));
  const s = schema as Record<string, unknown>;
  const found: string[] = [];
  if (Array.isArray(s.type)) found.push(`${path}: type array`);
  if (path !== "$" && Object.keys(s).every((k) => ["description", "title", "default"].includes(k))) found.push(`${path}: empty schema`);
  for (const [k, v] of Object.entries(s)) {
    if (k === "properties" || k === "$defs" || k === "definitions") for (const [name, sub] of Object.entries(v as object)) found.push(...unportable(sub, `${path}.${k}.${name}`));
    else if (typeof v === "object" && v !== null && k !== "enum" && k !== "required" && k !== "default") found.push(...unportable(v, `${path}.${k}`));
  }
  return found;
}

test("the MCP Inspector's CLI lists every tool with 0 schema warnings, also in --strict", () => {
  const repo = tempRepo();
  for (const strict of [false, true]) {
    const r = spawnSync(process.execPath, [INSPECTOR, "--cli", process.execPath, CLI, "mcp", "--agent", "inspector", "--method", "tools/list", ...(strict ? ["--strict"] : [])], {
      cwd: repo,
      env: cleanEnv(),
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.is(r.status, 0, r.stderr);
    const listed = JSON.parse(r.stdout).tools as { name: string; outputSchema?: unknown }[];
    assert.equal(listed.map((t) => t.name).sort(), ALL_TOOLS.map((t) => t.name).sort());
    assert.not.match(r.stderr, /warning|Schema portability/i, r.stderr);
    for (const t of listed) assert.ok(t.outputSchema, `${t.name} has an output schema`);
  }
});

test("no listed input or output schema has a type array or an empty schema; results validate in the SDK client", async () => {
  const repo = tempRepo();
  const h = await overStdio(repo, { agent: "a" });
  open.push(h);
  const { tools } = await h.client.listTools();
  for (const t of tools) {
    assert.equal(unportable(t.outputSchema), [], `${t.name} output`);
    assert.equal(unportable(t.inputSchema), [], `${t.name} input`);
    // The server refuses unknown arguments itself; Gemini's API rejects a schema that says so.
    assert.not.match(JSON.stringify(t.inputSchema), /additionalProperties/, `${t.name} input`);
  }
  // The client validates structuredContent against the listed (rewritten) schema: nullable and
  // free-form fields still pass.
  await h.ok("create_task", { objective: "x", id: "x" });
  const claimed = await h.ok("claim_task", { id: "x" });
  assert.is(claimed.task.claim.branch, "main");
  assert.is(claimed.task.base === null || typeof claimed.task.base === "string", true);
  await h.ok("lease_files", { paths: ["a.txt"] });
  assert.is((await h.ok("list_leases")).leases[0].task, null);
  // No integration branch at all (a repository on `trunk`): conflicts answers null, as its schema says.
  const trunk = tempRepo();
  gitOut(trunk, "branch", "-m", "main", "trunk");
  const t = await overStdio(trunk, { agent: "a" });
  open.push(t);
  assert.is((await t.ok("conflicts")).integration, null);
});

test("the rewrite: a type array becomes anyOf with the type-specific keywords in their branch; {} becomes any value", () => {
  assert.equal(portableSchema({ type: ["string", "null"], maxLength: 3, description: "d" }), {
    description: "d",
    anyOf: [{ type: "string", maxLength: 3 }, { type: "null" }],
  });
  const any = portableSchema({ type: "object", properties: { v: {} }, additionalProperties: {} }) as any;
  assert.is(any.additionalProperties, true);
  assert.equal(any.properties.v.anyOf.map((b: any) => b.type), ["string", "number", "boolean", "object", "array", "null"]);
  assert.equal(portableSchema({ anyOf: [{ type: "integer" }, { type: "null" }] }), { anyOf: [{ type: "integer" }, { type: "null" }] });
});

test("the server sends results as its tools build them; the suite's clients refuse one its published schema does not allow", async () => {
  // The server no longer checks its own results (server.ts, trustOwnOutput): the clients of the
  // suite do, against the schemas tools/list publishes (support/mcp.ts lists the tools first).
  const repo = tempRepo();
  const session = await McpSession.open({ cwd: repo, env: cleanEnv(), agent: "a", waitBoundMs: 5000, pollMs: 50 });
  const bad = defineTool({
    name: "bad_output",
    title: "A result with a field its schema does not name",
    description: "test only",
    input: {},
    output: { n: z.number() },
    async run() {
      return { data: { n: 1, extra: "not in the schema" }, text: "bad" };
    },
  });
  const server = createServer(session, { tools: [bad], log: () => {} });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "t", version: "0" });
  await client.connect(clientSide);
  try {
    const unchecked = await client.callTool({ name: "bad_output", arguments: {} });
    assert.is((unchecked.structuredContent as any).extra, "not in the schema", "sent as built");
    await client.listTools();
    let refused = "";
    await client.callTool({ name: "bad_output", arguments: {} }).catch((e: Error) => (refused = e.message));
    assert.match(refused, /does not match the tool's output schema/);
  } finally {
    await client.close();
    await server.close();
    session.close();
  }
});

test.run();
