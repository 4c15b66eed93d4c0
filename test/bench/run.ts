// `npm run bench`: runs every *.bench.ts here, one after another, each as its own process.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const dir = import.meta.dirname;
const only = process.argv[2];
let failed = 0;
for (const file of readdirSync(dir).filter((f) => f.endsWith(".bench.ts")).sort()) {
  if (only && !file.includes(only)) continue;
  console.log(`\n## ${file}`);
  const r = spawnSync(process.execPath, ["--import", "tsx", join(dir, file)], { stdio: "inherit" });
  if (r.status !== 0) failed++;
}
process.exitCode = failed ? 1 : 0;
