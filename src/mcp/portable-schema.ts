// Output schemas as every client's schema dialect can read them. zod writes a nullable primitive
// as `"type": ["string", "null"]` and an unknown value as `{}`: legal JSON Schema, but clients
// that map tool schemas onto OpenAPI-style dialects (Gemini among them) reject or misread both.
// The listing is rewritten to the equivalent portable forms: one `anyOf` branch per type, and
// `true` / an explicit any-of-every-type for "any value". The rewritten schema accepts exactly
// the values the zod schema accepts; the suite's clients check every result against it
// (server.ts, trustOwnOutput).
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ListToolsRequestSchema, type ListToolsResult } from "@modelcontextprotocol/sdk/types.js";

type Json = Record<string, unknown>;

/** Keywords that describe a schema rather than constrain it: they stay on the outer schema. */
const ANNOTATIONS = new Set(["description", "title", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"]);
const ANY_VALUE: Json[] = ["string", "number", "boolean", "object", "array", "null"].map((type) =>
  type === "object" ? { type, additionalProperties: true } : type === "array" ? { type, items: true } : { type },
);

function isEmpty(s: Json): boolean {
  return Object.keys(s).every((k) => ANNOTATIONS.has(k));
}

export function portableSchema(schema: unknown): unknown {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return schema;
  const s = schema as Json;
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === "properties" || k === "$defs" || k === "definitions" || k === "patternProperties") {
      out[k] = Object.fromEntries(Object.entries(v as Json).map(([name, sub]) => [name, slot(sub)]));
    } else if (k === "additionalProperties" || k === "items" || k === "not" || k === "contains" || k === "propertyNames") {
      out[k] = typeof v === "object" && v !== null && !Array.isArray(v) && isEmpty(v as Json) ? true : portableSchema(v);
    } else if ((k === "anyOf" || k === "oneOf" || k === "allOf" || k === "prefixItems") && Array.isArray(v)) {
      out[k] = v.map(slot);
    } else out[k] = v;
  }
  if (Array.isArray(out.type)) {
    const types = out.type as string[];
    const outer: Json = {};
    const inner: Json = {};
    for (const [k, v] of Object.entries(out)) if (k !== "type") (ANNOTATIONS.has(k) ? outer : inner)[k] = v;
    // Type-specific keywords (maxLength, format, items...) apply only to their type's branch.
    return { ...outer, anyOf: types.map((type) => (type === "null" ? { type } : { type, ...inner })) };
  }
  return out;
}

/** A schema in a place where `{}` would be an empty schema: spelled as any of every type. */
function slot(sub: unknown): unknown {
  if (sub !== null && typeof sub === "object" && !Array.isArray(sub) && isEmpty(sub as Json)) return { ...(sub as Json), anyOf: ANY_VALUE };
  return portableSchema(sub);
}

/**
 * An input schema without its top-level `additionalProperties: false`. The server refuses unknown
 * arguments itself (tool.ts registers strict objects), but Gemini's API rejects a tool whose schema
 * carries the key, so the listing does not say it.
 */
function openTop<T extends object>(schema: T): T {
  const { additionalProperties, ...rest } = schema as T & { additionalProperties?: unknown };
  return (additionalProperties === false ? rest : schema) as T;
}

/**
 * Rewrites the server's tools/list answer. McpServer (1.32) keeps its handlers in the protocol's
 * handler table; should a later SDK move it, the listing stays as zod wrote it and
 * test/mcp-schemas.test.ts (the Inspector's portability check) fails.
 */
export function portableListing(server: McpServer): void {
  const handlers = (server.server as unknown as { _requestHandlers?: Map<string, (req: unknown, extra: unknown) => Promise<ListToolsResult>> })._requestHandlers;
  const original = handlers?.get("tools/list");
  if (!original) return;
  server.server.setRequestHandler(ListToolsRequestSchema, async (req, extra) => {
    const listed = await original(req, extra);
    return {
      ...listed,
      tools: listed.tools.map((t) => ({
        ...t,
        inputSchema: portableSchema(openTop(t.inputSchema)) as typeof t.inputSchema,
        ...(t.outputSchema ? { outputSchema: portableSchema(t.outputSchema) as typeof t.outputSchema } : {}),
      })),
    };
  });
}
