// docs/mcp.md's tools table names every tool the server serves, and only those: a tool added to
// the server without a row is a tool the reader of mcp.md never learns of (docs/mcp-tools.md is
// generated from the same list; this table is written by hand).
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mcpTools } from "../scripts/generated-docs.ts";

const ROOT = resolve(import.meta.dirname, "..");

test("docs/mcp.md's tools table has a row for every served tool, and none for a tool not served", async () => {
  const served = (await mcpTools()).map((t) => t.name).sort();
  const text = readFileSync(join(ROOT, "docs/mcp.md"), "utf8");
  const start = text.indexOf("| tool | what it does | CLI |");
  assert.ok(start >= 0, "docs/mcp.md has the tools table");
  const table = text.slice(start).split("\n");
  const lines = table.slice(0, table.findIndex((l) => !l.startsWith("|")));
  const rows = lines.slice(2).map((l) => /^\| `([a-z_]+)` \|/.exec(l)?.[1] ?? l);
  const listed = [...new Set(rows)].sort();
  assert.ok(served.length > 0, "the server lists its tools");
  assert.equal(served.filter((n) => !listed.includes(n)), [], "served but missing from docs/mcp.md's tools table");
  assert.equal(listed.filter((n) => !served.includes(n)), [], "in docs/mcp.md's tools table but not served");
  assert.is(rows.length, listed.length, "each tool has one row");
});

test.run();
