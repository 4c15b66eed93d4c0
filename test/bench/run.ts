// `npm run bench`: runs every *.bench.ts here, one after another, each as its own process.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const dir = import.meta.dirname;
// Node reads NODE_EXTRA_CA_CERTS's bundle at every start, before any script: where it names the
// system's whole bundle (as on the machines here) that is ~45 ms of CPU in every process timed,
// `node -e 0` included, which would flatter every ratio to it. No bench reaches a server it would
// certify, so the benches run without it (test/support/repo.ts cleanEnv leaves it out as well).
const env = { ...process.env };
if (env.NODE_EXTRA_CA_CERTS) {
  console.log(`NODE_EXTRA_CA_CERTS (${env.NODE_EXTRA_CA_CERTS}) is left out of the benches' environment: Node's start, ours and \`node -e 0\`'s, without it`);
  env.BENCH_LEFT_OUT_CA_CERTS = env.NODE_EXTRA_CA_CERTS; // cold.bench.ts times `node -e 0` with it too, to say what it costs
  delete env.NODE_EXTRA_CA_CERTS;
}
const only = process.argv[2];
let failed = 0;
for (const file of readdirSync(dir).filter((f) => f.endsWith(".bench.ts")).sort()) {
  if (only && !file.includes(only)) continue;
  console.log(`\n## ${file}`);
  const r = spawnSync(process.execPath, ["--import", "tsx", join(dir, file)], { stdio: "inherit", env });
  if (r.status !== 0) failed++;
}
process.exitCode = failed ? 1 : 0;
