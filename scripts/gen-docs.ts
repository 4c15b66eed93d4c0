// `npm run docs`: writes the generated references (the CLI reference, the man page, the MCP tool
// reference) from the definitions; `--check` only reports which are stale (the suite runs it).
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { generatedDocs } from "./generated-docs.ts";

const root = join(import.meta.dirname, "..");
const check = process.argv.includes("--check");
const stale: string[] = [];
for (const [file, text] of Object.entries(await generatedDocs())) {
  const path = join(root, file);
  let current = "";
  try {
    current = readFileSync(path, "utf8");
  } catch {}
  if (current === text) continue;
  stale.push(file);
  if (!check) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
}
if (check && stale.length) {
  process.stderr.write(`stale: ${stale.join(", ")} (run npm run docs)\n`);
  process.exit(1);
}
process.stdout.write(stale.length ? `${check ? "stale" : "wrote"}: ${stale.join(", ")}\n` : "generated docs are up to date\n");
