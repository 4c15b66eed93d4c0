#!/usr/bin/env node
// Entry point: a dispatcher that loads only the bundle a verb needs. Hooks run before every edit
// an agent makes, so they must not pay for commander, the MCP SDK or the dashboard.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadBundle } from "./code-cache.ts";

const BUNDLES: Record<string, string> = { hook: "hook-main.cjs", mcp: "mcp-main.cjs" };

// A reader that stops early (`git handoff status | head`) closes the pipe: end quietly, no trace.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code === "EPIPE") process.exit(0);
  throw e;
});

const argv = process.argv.slice(2);
const TAKES_VALUE = new Set(["-C", "--agent"]);
const verb = argv.find((a, i) => !a.startsWith("-") && !TAKES_VALUE.has(argv[i - 1] ?? ""));
const special = verb !== undefined ? BUNDLES[verb] : undefined;
const bundle = special && existsSync(join(__dirname, special)) ? special : "cli-main.cjs";
(loadBundle(join(__dirname, bundle)) as { run(argv: string[]): void }).run(argv);
